"""The 'Flowers on TPU' Kaggle notebook, exported to a script.

    python run.py
"""
import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler

import helpers
from dataset import FlowerDataset, download_dataset, get_transforms
from metrics import MetricLogger
from net import FlowerNet

FLAGS = {
    "data_dir": "/kaggle/input/flowers",
    "out_dir": "/kaggle/working",
    "batch_size": 64,
    "num_workers": 4,
    "lr": 3e-4,
    "num_epochs": 10,
    "log_steps": 20,
    "seed": 1234,
    "num_cores": 8,
}

# Built once in the parent; the forked children share its weights.
WRAPPED_MODEL = xmp.MpModelWrapper(FlowerNet(num_classes=104))


def map_fn(index, flags):
    torch_xla.manual_seed(flags["seed"])
    device = torch_xla.device()

    if not xm.is_master_ordinal():
        xm.rendezvous("download_only_once")
    download_dataset(flags["data_dir"])
    if xm.is_master_ordinal():
        xm.rendezvous("download_only_once")

    train_ds = FlowerDataset(flags["data_dir"], "train", get_transforms(train=True))
    valid_ds = FlowerDataset(flags["data_dir"], "val", get_transforms(train=False))
    train_sampler = DistributedSampler(train_ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    valid_sampler = DistributedSampler(valid_ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False)
    train_loader = DataLoader(train_ds, batch_size=flags["batch_size"], sampler=train_sampler,
                              num_workers=flags["num_workers"], drop_last=True)
    valid_loader = DataLoader(valid_ds, batch_size=flags["batch_size"], sampler=valid_sampler,
                              num_workers=flags["num_workers"])

    model = WRAPPED_MODEL.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=flags["lr"] * xr.world_size())
    logger = MetricLogger(delimiter="  ")

    for epoch in range(flags["num_epochs"]):
        train_sampler.set_epoch(epoch)
        para_loader = pl.ParallelLoader(train_loader, [device])
        helpers.train_loop_fn(para_loader.per_device_loader(device), model, optimizer, logger, flags)
        para_loader = pl.ParallelLoader(valid_loader, [device])
        acc = helpers.valid_loop_fn(para_loader.per_device_loader(device), model)
        acc = xm.mesh_reduce("valid_acc", acc, lambda vals: sum(vals) / len(vals))
        xm.master_print(f"epoch {epoch}: {logger} valid_acc={acc:.4f}")

    torch.save(model.state_dict(), os.path.join(flags["out_dir"], f"model_{index}.bin"))  # expect: XLA601


if __name__ == "__main__":
    xmp.spawn(map_fn, args=(FLAGS,), nprocs=FLAGS["num_cores"], start_method="fork")  # expect: XLA001

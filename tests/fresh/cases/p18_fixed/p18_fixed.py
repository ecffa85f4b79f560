"""Launcher script, fixed: the runtime is asked inside the workers, and the final
meeting point is the workers' own rendezvous."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def _mp_fn(index, args):
    device = torch_xla.device()
    args.lr *= xr.world_size()
    blob = torch.load(args.data)
    ds = TensorDataset(blob["x"], blob["y"])
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = nn.Linear(blob["x"].size(1), 2).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in pl.MpDeviceLoader(loader, device):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            xm.optimizer_step(opt)
    xm.save(model.state_dict(), args.out)
    xm.rendezvous("training_done")


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="train.pt")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--out", default="linear.pt")
    return p.parse_args()


if __name__ == "__main__":
    args = parse()
    torch_xla.launch(_mp_fn, args=(args,))
    print("all replicas finished")

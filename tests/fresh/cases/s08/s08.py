# Legacy TPU-pod script from the XRT days, partly updated. Several APIs no longer exist.
import os

os.environ["XRT_TPU_CONFIG"] = "localservice;0;localhost:51011"  # expect: XLA810

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def get_dataset():
    x = torch.randn(40000, 20)
    return TensorDataset(x, (x.sum(1) > 0).long())


def _mp_fn(index, flags):
    device = torch_xla.device()
    ds = get_dataset()
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xm.get_ordinal(), shuffle=True)  # expect: XLA802
    loader = DataLoader(ds, batch_size=flags["bs"], sampler=sampler, drop_last=True)
    model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=flags["lr"])
    predict = torch_xla.experimental.compile(lambda inp: model(inp).argmax(-1))  # expect: XLA808
    para_loader = pl.ParallelLoader(loader, [device]).per_device_loader(device)  # expect: XLA306
    for epoch in range(flags["epochs"]):
        for x, y in para_loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer, barrier=True)  # expect: XLA204
        if xm.is_master_process():  # expect: XLA812
            print(f"epoch {epoch} finished")
    probe = torch.zeros(8, 20, device=device)
    xm.master_print(predict(probe).cpu())
    xm.rendezvous("training_done")


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=({"bs": 64, "lr": 0.05, "epochs": 3},))
    xm.rendezvous("all_spawned_jobs_done")  # expect: XLA005

"""DDP on a v4-8 via torch_xla.launch: steps are much slower than the single-core
baseline, and the printed step times are implausibly small."""
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def make_model():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))


def _mp_fn(index):
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    blob = torch.load("mnist_train.pt")
    ds = TensorDataset(blob["images"].float().div(255.0), blob["labels"])
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=128, sampler=sampler, drop_last=True)
    model = DDP(make_model().to(device), device_ids=[index], gradient_as_bucket_view=True)  # expect: XLA102
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            xm.optimizer_step(opt)  # expect: XLA108
            dt = time.perf_counter() - t0  # expect: XLA504
            if step % 100 == 0:
                xm.master_print(f"epoch {epoch} step {step}: {dt * 1e3:.1f} ms")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)

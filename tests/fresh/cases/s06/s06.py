# One training file for GPU clusters and TPU pods. The CUDA/NCCL code lives only under
# `if not USE_TPU:` (or after the TPU branch returned).
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

USE_TPU = os.environ.get("ACCELERATOR", "tpu") == "tpu"
if USE_TPU:
    import torch_xla
    import torch_xla.distributed.parallel_loader as pl


def make_model():
    return nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256))


def setup(rank, model):
    if not USE_TPU:
        dist.init_process_group("nccl", rank=rank, world_size=torch.cuda.device_count())
        torch.cuda.set_device(rank)
        return DDP(model.cuda(rank), device_ids=[rank], output_device=rank), torch.device("cuda", rank)
    dist.init_process_group("xla")  # expect: XLA104
    device = torch_xla.device()
    return DDP(model.to(device)), device  # expect: XLA101


def worker(rank, loader_factory):
    model, device = setup(rank, make_model())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = loader_factory(rank)
    if USE_TPU:
        loader = pl.MpDeviceLoader(loader, device)
    for x, y in loader:
        if not USE_TPU:
            x, y = x.cuda(rank, non_blocking=True), y.cuda(rank, non_blocking=True)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    if not USE_TPU:
        torch.cuda.synchronize()


def main(loader_factory):
    if USE_TPU:
        torch_xla.launch(worker, args=(loader_factory,))
    else:
        mp.spawn(worker, args=(loader_factory,), nprocs=torch.cuda.device_count())

"""Device selection for GPU (torchrun) and TPU (PJRT) runs, picked from the environment
(the shape of timm's utils/distributed.py init_distributed_device)."""
import os

import torch

USE_TPU = os.environ.get("PJRT_DEVICE", "") == "TPU"

if USE_TPU:
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    import torch_xla.runtime as xr


def get_device():
    if USE_TPU:
        return torch_xla.device()
    return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))


def get_world_size():
    if USE_TPU:
        return xr.world_size()
    return int(os.environ.get("WORLD_SIZE", 1))


def get_rank():
    if USE_TPU:
        return xr.global_ordinal()
    return int(os.environ.get("RANK", 0))


def wrap_loader(loader):
    if USE_TPU:
        return pl.MpDeviceLoader(loader, get_device())
    return loader


def optimizer_step(optimizer):
    if USE_TPU:
        xm.optimizer_step(optimizer, barrier=True)  # expect: XLA204
        return
    optimizer.step()

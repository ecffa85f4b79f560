"""Rank helpers in the style of DeiT/DETR util/misc.py, ported to torch_xla."""
import torch
import torch.distributed as dist
import torch_xla.runtime as xr


def init_distributed_mode(backend):
    dist.init_process_group(backend, init_method="env://")  # expect: XLA104
    dist.barrier()


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return xr.global_ordinal()


def get_world_size():
    return xr.world_size()


def is_main_process():
    return get_rank() == 0


def save_on_master(state, path):
    if is_main_process():
        torch.save(state, path)  # expect: XLA601


class SmoothedValue:
    """Running average of Python numbers."""

    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)

"""The one place that knows whether we run on a TPU (torch_xla) or on GPUs (torchrun + NCCL)."""
import os

import torch
import torch.distributed as dist

try:
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.runtime as xr

    _XLA_AVAILABLE = True
except ImportError:
    _XLA_AVAILABLE = False


def is_torch_xla_available():
    return _XLA_AVAILABLE


def init_distributed():
    if is_torch_xla_available():
        dist.init_process_group("xla", init_method="xla://")
        return
    dist.init_process_group("nccl")


def device():
    if is_torch_xla_available():
        return torch_xla.device()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return torch.device("cuda", local_rank)


def world_size():
    if is_torch_xla_available():
        return xr.world_size()
    return dist.get_world_size()


def rank():
    if is_torch_xla_available():
        return xr.global_ordinal()
    return dist.get_rank()


def seed_everything(seed):
    torch.manual_seed(seed)
    if is_torch_xla_available():
        xm.set_rng_state(seed)
    else:
        torch.cuda.manual_seed_all(seed)


def autocast():
    if is_torch_xla_available():
        return torch.autocast("xla", dtype=torch.bfloat16)
    return torch.autocast("cuda", dtype=torch.float16)


def optimizer_step(optimizer):
    if is_torch_xla_available():
        xm.optimizer_step(optimizer)  # expect: XLA108
        return
    optimizer.step()

import contextlib

import torch
import torch.distributed as dist


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def amp_context(device_type, enabled=True):
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device_type, dtype=torch.float16)  # expect: XLA703


def make_scaler(device_type):
    if device_type == "cuda":
        return torch.amp.GradScaler("cuda")
    return None

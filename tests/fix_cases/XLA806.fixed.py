# options: --xla-version=2.4
import torch_xla
import torch_xla.runtime as xr


def info():
    return xr.world_size(), xr.global_ordinal(), xr.device_type(), torch_xla.device()

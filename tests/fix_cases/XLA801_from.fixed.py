import torch_xla.runtime as xr
from torch_xla.core.xla_model import get_local_ordinal


def info():
    return xr.world_size(), xr.global_ordinal(), get_local_ordinal()

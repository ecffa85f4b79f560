import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def get_world_size():
    return xr.world_size()


def is_master():
    return xr.global_ordinal() == 0


def is_local_master():
    return xm.is_master_ordinal()

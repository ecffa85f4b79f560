import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def is_main_process():
    return xm.is_master_ordinal()


def is_world_zero():
    return xr.global_ordinal() == 0

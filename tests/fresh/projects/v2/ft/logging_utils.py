import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def is_main_process():
    return xm.is_master_ordinal()


def is_global_main_process():
    return xr.global_ordinal() == 0


def log_rank0(msg):
    if is_global_main_process():
        print(msg, flush=True)

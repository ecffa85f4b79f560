"""Rank helpers (PyTorch/XLA runtime)."""
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def get_rank():
    return xr.global_ordinal()


def get_world_size():
    return xr.world_size()


def get_local_rank():
    return xm.get_local_ordinal(defval=0)  # expect: XLA809


def is_main_process():
    return get_rank() == 0


def barrier(tag):
    xm.rendezvous(tag)


def all_mean(name, value):
    return xm.mesh_reduce(name, value, lambda vals: sum(vals) / len(vals))

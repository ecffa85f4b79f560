"""Rank / world-size helpers. Everything else asks here instead of touching the runtime."""
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def get_rank():
    return xr.global_ordinal()


def get_world_size():
    return xr.world_size()


def is_main():
    """The process that writes logs, trackers and checkpoints."""
    return xm.is_master_ordinal()


def step_optimizer(optimizer):
    """All-reduce the gradients over the replicas, then step."""
    xm.optimizer_step(optimizer)


def reduce_mean(tag, value):
    """Mean of a Python number over all replicas; returns a float on every replica."""
    return xm.mesh_reduce(tag, value, lambda vals: sum(vals) / len(vals))


def barrier(tag):
    xm.rendezvous(tag)


def save_checkpoint(state, path):
    xm.save(state, path)

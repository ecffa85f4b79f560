"""Device and mesh helpers for the SPMD entry point."""
import numpy as np
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def get_device():
    return torch_xla.device()


def build_mesh(model_axis=1):
    num_devices = xr.world_size()  # expect: XLA902
    mesh_shape = (num_devices // model_axis, model_axis)
    return xs.Mesh(np.arange(num_devices), mesh_shape, ("fsdp", "model"))

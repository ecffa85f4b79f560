import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def build_mesh(cfg):
    num_devices = xr.world_size()  # expect: XLA902
    shape = (num_devices // cfg.tensor_parallel, cfg.tensor_parallel)
    return xs.Mesh(np.arange(num_devices), shape, ("fsdp", "tensor"))


def shard_params(model, mesh):
    for name, param in model.named_parameters():
        if param.dim() == 2:
            xs.mark_sharding(param, mesh, ("fsdp", "tensor"))  # expect: XLA905


def shard_batch(tensor, mesh):
    xs.mark_sharding(tensor, mesh, ("fsdp", None))
    return tensor

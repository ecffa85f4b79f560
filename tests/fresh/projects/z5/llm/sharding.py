import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def setup_spmd(cfg):
    xr.use_spmd()  # expect: XLA906
    num_devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(num_devices), (num_devices, 1), ("fsdp", "tensor"))
    xs.set_global_mesh(mesh)
    return mesh


def shard_model(model, mesh):
    for _, param in model.named_parameters():
        if param.dim() == 2:
            xs.mark_sharding(param, mesh, ("fsdp", None))


def batch_sharding(mesh):
    return xs.ShardingSpec(mesh, ("fsdp", None), minibatch=True)

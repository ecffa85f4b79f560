import numpy as np
import torch_xla.runtime as xr
from torch_xla.experimental.xla_sharding import Mesh  # expect: XLA807
import torch_xla.distributed.spmd as xs


def build_mesh():
    num_devices = xr.global_runtime_device_count()
    device_ids = np.arange(num_devices)
    return Mesh(device_ids, (num_devices, 1), ("fsdp", "tensor"))


def shard_params(model, mesh):
    for name, param in model.named_parameters():
        if param.dim() == 2:
            xs.mark_sharding(param, mesh, ("fsdp", "tensor"))
        else:
            xs.mark_sharding(param, mesh, (None,) * param.dim())

"""Device mesh and sharding specs for data x model parallelism."""
import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def build_mesh(model_parallel=1):
    num_devices = xr.global_runtime_device_count()
    assert num_devices % model_parallel == 0
    mesh = xs.Mesh(np.arange(num_devices), (num_devices // model_parallel, model_parallel), ("fsdp", "model"))
    xs.set_global_mesh(mesh)
    return mesh


def data_sharding(mesh):
    return xs.ShardingSpec(mesh, ("fsdp", None))


def shard_output(output, mesh):
    logits, aux = output
    xs.mark_sharding(logits, mesh, ("fsdp", None, None))
    return logits, aux

"""Mesh construction and parameter sharding for the SPMD pre-training job."""
import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def make_mesh(model_axis=1):
    num_devices = xr.global_runtime_device_count()
    device_ids = np.arange(num_devices)
    return xs.Mesh(device_ids, (num_devices // model_axis, model_axis), ("data", "model"))


def shard_params(model, mesh):
    """Megatron-style: column-parallel first projection, row-parallel second."""
    xs.mark_sharding(model.embed.weight, mesh, ("model", None))
    for block in model.blocks:
        xs.mark_sharding(block.fc1.weight, mesh, ("model", None))
        xs.mark_sharding(block.fc2.weight, mesh, (None, "model"))


def batch_sharding(mesh):
    # each host feeds its own slice of the global batch
    return xs.ShardingSpec(mesh, ("data", None), minibatch=True)

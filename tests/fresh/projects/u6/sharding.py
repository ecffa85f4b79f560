"""The 2-D device mesh (fsdp x tensor) and the sharding annotations of the decoder."""
import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

FSDP, TENSOR = "fsdp", "tensor"


def make_mesh(tensor_parallel=1):
    n = xr.global_runtime_device_count()
    if n % tensor_parallel:
        raise ValueError(f"{n} devices cannot be split for tensor_parallel={tensor_parallel}")
    return xs.Mesh(np.arange(n), (n // tensor_parallel, tensor_parallel), (FSDP, TENSOR))


def shard_linear(layer, mesh, column):
    # column-parallel layers split their output rows, row-parallel ones their input columns
    xs.mark_sharding(layer.weight, mesh, (TENSOR, FSDP) if column else (FSDP, TENSOR))


def shard_model(model, mesh):
    """Annotate every weight; the model must already be on the XLA device."""
    xs.mark_sharding(model.embed.weight, mesh, (TENSOR, FSDP))
    for block in model.blocks:
        shard_linear(block.qkv, mesh, column=True)
        shard_linear(block.proj, mesh, column=False)
        shard_linear(block.up, mesh, column=True)
        shard_linear(block.down, mesh, column=False)
    xs.mark_sharding(model.lm_head.weight, mesh, (TENSOR, FSDP))


def batch_sharding(mesh):
    """(batch, seq) inputs: batch over the fsdp axis, replicated over the tensor axis."""
    return xs.ShardingSpec(mesh, (FSDP, None))

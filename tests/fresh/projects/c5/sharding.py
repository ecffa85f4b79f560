"""Mesh construction and FSDP-style weight annotations."""
import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def build_mesh(model_parallel=1):
    num_devices = xr.global_runtime_device_count()
    fsdp = num_devices // model_parallel
    return xs.Mesh(np.arange(num_devices), (fsdp, model_parallel), ("fsdp", "tensor"))


def shard_transformer(model, mesh):
    xs.mark_sharding(model.embed.weight, mesh, ("tensor", "fsdp"))
    for layer in model.layers:
        for proj in (layer.attn.wq, layer.attn.wk, layer.attn.wv, layer.mlp.w1, layer.mlp.w3):
            xs.mark_sharding(proj.weight, mesh, ("tensor", "fsdp"))
        for proj in (layer.attn.wo, layer.mlp.w2):
            xs.mark_sharding(proj.weight, mesh, ("fsdp", "tensor"))


def batch_sharding(mesh):
    return xs.ShardingSpec(mesh, ("fsdp", None))

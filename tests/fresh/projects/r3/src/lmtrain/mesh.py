"""Device mesh and parameter sharding (Megatron-style column/row split)."""
import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

COLUMN_PARALLEL = ("wq.weight", "wk.weight", "wv.weight", "w1.weight", "w3.weight")
ROW_PARALLEL = ("wo.weight", "w2.weight")


def build_mesh(model_parallel=1):
    num_devices = xr.global_runtime_device_count()
    data_parallel = num_devices // model_parallel
    return xs.Mesh(np.arange(num_devices), (data_parallel, model_parallel), ("data", "model"))


def shard_params(model, mesh):
    for name, param in model.named_parameters():
        if name.endswith(COLUMN_PARALLEL):
            xs.mark_sharding(param, mesh, ("model", None))
        elif name.endswith(ROW_PARALLEL):
            xs.mark_sharding(param, mesh, (None, "model"))


def batch_sharding(mesh):
    return xs.ShardingSpec(mesh, ("data", None))

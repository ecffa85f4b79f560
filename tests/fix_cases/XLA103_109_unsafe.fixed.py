# options: --unsafe-fixes
# remains: XLA103
import os

import torch.distributed as dist
import torch_xla
import torch_xla.runtime as xr
from torch.utils.data.distributed import DistributedSampler


def _mp_fn(index, dataset):
    # the master comes from the runtime
    os.environ.update({"MASTER_PORT": "29500"})  # a dict of settings: a human
    rank = int(xr.global_ordinal())
    local_rank = int(xr.local_ordinal())
    dist.init_process_group("xla", init_method="xla://")
    sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    return rank, local_rank, sampler


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))

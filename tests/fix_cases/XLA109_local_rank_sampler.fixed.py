# options: --unsafe-fixes
# a sampler's rank counts replicas across hosts: LOCAL_RANK there becomes the global ordinal;
# a LOCAL_RANK read elsewhere stays local

import torch_xla
import torch_xla.runtime as xr
from torch.utils.data.distributed import DistributedSampler


def _mp_fn(index, dataset):
    local_rank = int(xr.local_ordinal())
    sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=int(xr.global_ordinal()))
    return local_rank, sampler


torch_xla.launch(_mp_fn, args=(None,))

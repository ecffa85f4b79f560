import torch_xla.core.xla_model as xm
from torch.utils.data.distributed import DistributedSampler


def shard(ds):
    return DistributedSampler(ds, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal())


def kind(device):
    return xm.parse_xla_device(device)


world = xm.xrt_world_size

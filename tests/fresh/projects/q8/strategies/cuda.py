import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from .base import Strategy


class CUDAStrategy(Strategy):
    """NCCL data parallel under torchrun."""

    def setup(self):
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29500")
        dist.init_process_group("nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)

    @property
    def world_size(self):
        return dist.get_world_size()

    @property
    def rank(self):
        return dist.get_rank()

    def wrap_model(self, model):
        return DDP(model.cuda(), device_ids=[self.local_rank])

    def reduce_mean(self, value):
        value = value.detach().clone()
        dist.all_reduce(value)
        return (value / self.world_size).item()

    def barrier(self):
        torch.cuda.synchronize()
        dist.barrier()

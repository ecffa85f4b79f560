import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from .base import Strategy


class DDPStrategy(Strategy):
    def __init__(self):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        torch.cuda.set_device(self.local_rank)

    def root_device(self):
        return torch.device("cuda", self.local_rank)

    def world_size(self):
        return dist.get_world_size()

    def global_rank(self):
        return dist.get_rank()

    def setup_model(self, model):
        return DDP(model.cuda(), device_ids=[self.local_rank])

    def teardown(self):
        torch.cuda.empty_cache()
        dist.destroy_process_group()

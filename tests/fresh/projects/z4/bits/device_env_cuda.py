import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from .device_env import DeviceEnv


class DeviceEnvCuda(DeviceEnv):
    def __init__(self, amp=False):
        super().__init__(amp=amp)
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))
        if self.world_size > 1:
            dist.init_process_group(backend="nccl", init_method="env://")
            self.global_rank = dist.get_rank()
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)

    def autocast(self):
        return torch.cuda.amp.autocast(enabled=self.amp, dtype=torch.bfloat16)

    def wrap_distributed(self, model):
        if self.world_size > 1:
            return DistributedDataParallel(model, device_ids=[self.local_rank])
        return model

    def mark_step(self):
        torch.cuda.synchronize()

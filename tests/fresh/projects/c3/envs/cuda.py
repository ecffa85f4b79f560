"""NVIDIA GPUs under torchrun: NCCL, DDP with device_ids, fp16 with loss scaling."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from .base import DeviceEnv


class CudaEnv(DeviceEnv):
    def setup(self):
        os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(self.cfg.master_port)
        self.rank = int(os.environ["RANK"])
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.world_size = int(os.environ["WORLD_SIZE"])
        dist.init_process_group("nccl", rank=self.rank, world_size=self.world_size)
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)
        self.scaler = torch.cuda.amp.GradScaler()

    def wrap_model(self, model):
        return DDP(model.cuda(), device_ids=[self.local_rank], output_device=self.local_rank)

    def autocast(self):
        return torch.autocast("cuda", dtype=torch.float16)

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def step(self, optimizer):
        self.scaler.step(optimizer)
        self.scaler.update()

    def mark_step(self):
        torch.cuda.synchronize()

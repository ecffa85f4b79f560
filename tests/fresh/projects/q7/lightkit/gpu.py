import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from .trainer import Trainer


class GPUTrainer(Trainer):
    """Mixed-precision DDP trainer for torchrun jobs."""

    def setup(self):
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(self.model.cuda(), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.cfg.lr)
        self.scaler = torch.cuda.amp.GradScaler()

    def training_step(self, batch):
        ids = batch["input_ids"].cuda(non_blocking=True)
        labels = batch["labels"].cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            return self.model(ids, labels)

    def optimizer_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()

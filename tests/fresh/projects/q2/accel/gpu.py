"""NVIDIA GPUs, one process per GPU, started by torchrun."""
import contextlib
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from .base import DistributedBackend


class CUDABackend(DistributedBackend):
    name = "cuda"

    def launch(self, fn, args=()):
        # torchrun has already started one process per GPU
        fn(int(os.environ["LOCAL_RANK"]), self, *args)

    def setup(self, index):
        os.environ.setdefault("MASTER_ADDR", "localhost")
        dist.init_process_group("nccl")
        torch.cuda.set_device(index)
        self.rank = index
        self._device = torch.device("cuda", index)
        self.scaler = torch.cuda.amp.GradScaler()

    def device(self):
        return self._device

    def ddp_kwargs(self):
        return {"device_ids": [self.rank], "output_device": self.rank}

    def make_loader(self, dataset, batch_size, train=True):
        sampler = DistributedSampler(dataset, shuffle=train)
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler, pin_memory=True, num_workers=4)

    @contextlib.contextmanager
    def autocast(self):
        with torch.autocast("cuda", dtype=torch.float16):
            yield

    def step(self, optimizer):
        optimizer.step()

    def synchronize(self):
        torch.cuda.synchronize()

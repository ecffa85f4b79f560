"""GPU strategy (torch.multiprocessing + NCCL). Only bench_gpu.py uses it."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler


class CUDAStrategy:
    def __init__(self, num_processes=None):
        self.num_processes = num_processes or torch.cuda.device_count()

    def launch(self, function, *args):
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29500"
        mp.spawn(self._wrap, args=(function, args), nprocs=self.num_processes)

    def _wrap(self, rank, function, args):
        dist.init_process_group("nccl", rank=rank, world_size=self.num_processes)
        torch.cuda.set_device(rank)
        self.rank = rank
        function(rank, self, *args)

    def root_device(self):
        return torch.device("cuda", self.rank)

    def setup_module(self, module):
        return DDP(module.cuda(), device_ids=[self.rank])

    def distributed_sampler(self, dataset, shuffle=True):
        return DistributedSampler(dataset, shuffle=shuffle)

    def process_dataloader(self, loader):
        return loader

    def optimizer_step(self, optimizer):
        optimizer.step()
        torch.cuda.synchronize()

"""NCCL data parallel on all local GPUs (mp.spawn, one process per GPU)."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler

from .base import Backend


def _init_and_run(local_rank, fn, backend, cfg, world_size):
    dist.init_process_group("nccl", rank=local_rank, world_size=world_size)
    torch.cuda.set_device(local_rank)
    backend.local_rank = local_rank
    try:
        fn(local_rank, backend, cfg)
    finally:
        dist.destroy_process_group()


class CudaBackend(Backend):
    name = "cuda"

    def __init__(self):
        self.local_rank = 0
        self.scaler = torch.cuda.amp.GradScaler()

    def spawn(self, fn, cfg):
        world_size = torch.cuda.device_count()
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29500"
        mp.spawn(_init_and_run, args=(fn, self, cfg, world_size), nprocs=world_size)

    def device(self):
        return torch.device("cuda", self.local_rank)

    def wrap_model(self, model):
        torch.backends.cudnn.benchmark = True
        model = torch.compile(model.cuda(self.local_rank))
        return DDP(model, device_ids=[self.local_rank])

    def sampler(self, dataset):
        return DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank())

    def autocast(self):
        return torch.autocast("cuda", dtype=torch.float16)

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def step(self, optimizer):
        self.scaler.step(optimizer)
        self.scaler.update()
        torch.cuda.synchronize()

    def is_main(self):
        return dist.get_rank() == 0

    def save(self, obj, path):
        if self.is_main():
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            torch.save(obj, path)

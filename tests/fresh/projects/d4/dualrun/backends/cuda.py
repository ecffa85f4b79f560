"""NVIDIA backend for torchrun: NCCL, one GPU per process, DDP with device_ids."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler


class CUDABackend:
    name = "cuda"
    dynamo_backend = "inductor"

    def __init__(self):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.device = torch.device("cuda", self.local_rank)

    def setup(self):
        dist.init_process_group("nccl")
        torch.cuda.set_device(self.local_rank)

    def wrap(self, model):
        return DDP(model.cuda(self.local_rank), device_ids=[self.local_rank], output_device=self.local_rank)

    def sampler(self, dataset):
        return DistributedSampler(dataset, shuffle=True, drop_last=True)

    def loader(self, data_loader):
        return data_loader

    def autocast(self):
        return torch.autocast("cuda", dtype=torch.bfloat16)

    def mark_step(self):
        torch.cuda.synchronize()

    def is_main(self):
        return dist.get_rank() == 0

    def barrier(self):
        dist.barrier()

    def save(self, obj, path):
        if dist.get_rank() == 0:
            torch.save(obj, path)

    def teardown(self):
        torch.cuda.empty_cache()
        dist.destroy_process_group()

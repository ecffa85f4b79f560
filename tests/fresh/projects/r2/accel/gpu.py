import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler


class GPUAccelerator:
    name = "cuda"

    def __init__(self):
        self.world_size = torch.cuda.device_count()
        self.rank = 0

    def launch(self, fn, *args):
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "29500"
        mp.spawn(self._entry, args=(fn, args), nprocs=self.world_size)

    def _entry(self, rank, fn, args):
        self.rank = rank
        dist.init_process_group("nccl", rank=rank, world_size=self.world_size)
        torch.cuda.set_device(rank)
        torch.backends.cudnn.benchmark = True
        fn(rank, *args)

    def device(self):
        return torch.device("cuda", self.rank)

    def prepare_model(self, model):
        model = model.cuda(self.rank)
        return DDP(model, device_ids=[self.rank])

    def sampler(self, dataset, shuffle=True):
        return DistributedSampler(
            dataset, num_replicas=self.world_size, rank=self.rank, shuffle=shuffle
        )

    def wrap_loader(self, loader):
        return loader

    def step(self, optimizer):
        optimizer.step()

    def is_main_process(self):
        return self.rank == 0

    def reduce_mean(self, tag, value):
        t = torch.tensor([value], device=self.device())
        dist.all_reduce(t)
        torch.cuda.synchronize()
        return t.item() / self.world_size

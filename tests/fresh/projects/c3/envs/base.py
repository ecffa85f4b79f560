"""What every device environment provides; subclasses override what differs."""
import contextlib

import torch
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler


class DeviceEnv:
    def __init__(self, cfg):
        self.cfg = cfg
        self.rank = 0
        self.local_rank = 0
        self.world_size = 1
        self.device = torch.device("cpu")

    def run(self, fn, cfg):
        self.setup()
        fn(self, cfg)

    def setup(self):
        raise NotImplementedError

    def is_primary(self):
        return self.rank == 0

    def wrap_model(self, model):
        return model.to(self.device)

    def compile(self, model):
        return torch.compile(model)  # expect: XLA403

    def make_sampler(self, dataset):
        return DistributedSampler(dataset, num_replicas=self.world_size, rank=self.rank, shuffle=True)

    def autocast(self):
        return contextlib.nullcontext()

    def backward(self, loss):
        loss.backward()

    def step(self, optimizer):
        optimizer.step()

    def mark_step(self):
        pass

    def save(self, state, path):
        torch.save(state, path)

    def shutdown(self):
        if dist.is_initialized():
            dist.destroy_process_group()

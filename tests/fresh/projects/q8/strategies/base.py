import torch
from torch.utils.data import DistributedSampler


class Strategy:
    """Single-process CPU strategy; the base of the others."""

    def __init__(self, grad_clip=1.0):
        self.grad_clip = grad_clip
        self.device = torch.device("cpu")

    def setup(self):
        pass

    @property
    def world_size(self):
        return 1

    @property
    def rank(self):
        return 0

    def make_sampler(self, dataset):
        return DistributedSampler(dataset, num_replicas=self.world_size, rank=self.rank)

    def wrap_model(self, model):
        return model.to(self.device)

    def device_loader(self, loader):
        return loader

    def optimizer_step(self, optimizer):
        optimizer.step()

    def save(self, obj, path):
        torch.save(obj, path)

    def barrier(self):
        pass

"""A sampler that shards by the replica's own ordinal (no process group needed)."""
import torch
import torch_xla.runtime as xr
from torch.utils.data import Sampler


class ShardSampler(Sampler):
    def __init__(self, dataset, shuffle=True, seed=0):
        self.dataset = dataset
        self.num_replicas = xr.world_size()
        self.rank = xr.global_ordinal()
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.num_samples = len(dataset) // self.num_replicas

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        if self.shuffle:
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            order = torch.randperm(len(self.dataset), generator=g).tolist()
        else:
            order = list(range(len(self.dataset)))
        return iter(order[self.rank : self.num_samples * self.num_replicas : self.num_replicas])

    def __len__(self):
        return self.num_samples

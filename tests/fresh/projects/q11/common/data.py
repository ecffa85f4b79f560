import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class ShardedText(Dataset):
    """Pre-tokenised fixed-length samples stored as one int32 tensor."""

    def __init__(self, path):
        self.samples = torch.load(path)

    def __len__(self):
        return self.samples.size(0)

    def __getitem__(self, i):
        row = self.samples[i].long()
        return row[:-1], row[1:]


def build_loader(path, batch_size, rank, world_size):
    ds = ShardedText(path)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(ds, batch_size=batch_size, sampler=sampler, drop_last=True, num_workers=4)
    return loader, sampler

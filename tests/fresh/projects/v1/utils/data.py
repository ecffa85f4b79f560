import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class RandomImages(Dataset):
    def __init__(self, n, num_classes=10, size=32):
        g = torch.Generator().manual_seed(1234)
        self.images = torch.randn(n, 3, size, size, generator=g)
        self.labels = torch.randint(0, num_classes, (n,), generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]


def build_train_loader(dataset, batch_size, world_size, rank, workers=4):
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=workers)  # expect: XLA304


def build_eval_loader(dataset, batch_size, world_size, rank):
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=False)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)

import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def load_split(path, split):
    blob = torch.load(f"{path}/{split}.pt")
    return TensorDataset(blob["ids"], blob["labels"])


def build_loader(path, split, batch_size, world_size, rank, workers=4):
    dataset = load_split(path, split)
    train = split == "train"
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=train)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=workers)  # expect: XLA304

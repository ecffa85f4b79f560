"""Criteo-style click logs (13 dense, 26 categorical features) stored as .npz."""
import numpy as np
import torch
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class ClickLogDataset(Dataset):
    def __init__(self, path):
        data = np.load(path)
        self.dense = np.log1p(np.maximum(data["dense"], 0)).astype(np.float32)
        self.sparse = data["sparse"].astype(np.int64)
        self.labels = data["labels"].astype(np.float32)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.dense[i]), torch.from_numpy(self.sparse[i]), torch.tensor(self.labels[i])


def build_loader(dataset, batch_size, device, train):
    sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=train)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4, drop_last=train)
    return pl.MpDeviceLoader(loader, device), sampler

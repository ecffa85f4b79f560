import os

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class TensorFileDataset(Dataset):
    """Pre-resized uint8 images and labels saved with torch.save (one file per split)."""

    def __init__(self, root, split, cache=None):
        path = os.path.join(root, f"{split}.pt")
        if cache is not None and os.path.exists(os.path.join(cache, f"{split}.pt")):
            path = os.path.join(cache, f"{split}.pt")
        self.images, self.labels = torch.load(path)

    def __len__(self):
        return self.labels.size(0)

    def __getitem__(self, i):
        return self.images[i].float().div_(255.0), self.labels[i]


def build_train_loader(cfg, rank, world, cache):
    ds = TensorFileDataset(cfg.data_dir, "train", cache)
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=True, drop_last=True)
    return DataLoader(ds, batch_size=cfg.batch_size, sampler=sampler, num_workers=cfg.workers, persistent_workers=True)  # expect: XLA304


def build_eval_loader(cfg, rank, world):
    ds = TensorFileDataset(cfg.data_dir, "val")
    sampler = DistributedSampler(ds, num_replicas=world, rank=rank, shuffle=False)
    return DataLoader(ds, batch_size=cfg.batch_size, sampler=sampler, num_workers=cfg.workers)

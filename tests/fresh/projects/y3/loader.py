"""Datasets and the loader factory."""
import os

import torch
from torch.utils.data import DataLoader, Dataset


class TensorFolder(Dataset):
    """Pre-processed shards: <root>/<split>/*.pt, each holding (images uint8 [N,3,H,W], labels [N])."""

    def __init__(self, root, split):
        folder = os.path.join(root, split)
        images, labels = [], []
        for name in sorted(os.listdir(folder)):
            x, y = torch.load(os.path.join(folder, name))
            images.append(x)
            labels.append(y)
        self.images = torch.cat(images)
        self.labels = torch.cat(labels)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.images[index].float().div_(255.0), self.labels[index]


def create_loader(dataset, batch_size, is_training=False, num_workers=4, pin_memory=False):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=is_training,
        num_workers=num_workers,
        pin_memory=pin_memory,
        drop_last=is_training,
    )

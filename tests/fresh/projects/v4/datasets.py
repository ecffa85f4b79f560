import os

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class ShapesDataset(Dataset):
    def __init__(self, root, split="train"):
        data = np.load(os.path.join(root, f"shapes_{split}.npz"))
        self.images = torch.from_numpy(data["images"]).float().unsqueeze(1) / 255.0
        self.labels = torch.from_numpy(data["labels"]).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


def build_train_loader(cfg):
    dataset = ShapesDataset(cfg.data_root, "train")
    return DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True, drop_last=True, num_workers=2)  # expect: XLA303


def build_val_loader(cfg):
    dataset = ShapesDataset(cfg.data_root, "val")
    return DataLoader(dataset, batch_size=cfg.batch_size)

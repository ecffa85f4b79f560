import os

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = torch.tensor([0.480, 0.448, 0.398]).view(3, 1, 1)
STD = torch.tensor([0.277, 0.269, 0.282]).view(3, 1, 1)


class TinyImageNet(Dataset):
    def __init__(self, root, split="train"):
        self.root = os.path.join(root, split)
        self.items = []
        for label, wnid in enumerate(sorted(os.listdir(self.root))):
            for fname in sorted(os.listdir(os.path.join(self.root, wnid))):
                self.items.append((os.path.join(self.root, wnid, fname), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        img = np.asarray(Image.open(path).convert("RGB"), dtype=np.float32) / 255.0
        x = torch.from_numpy(img).permute(2, 0, 1)
        return (x - MEAN) / STD, label


def make_loader(cfg, split):
    dataset = TinyImageNet(cfg.root, split)
    train = split == "train"
    return DataLoader(  # expect: XLA303
        dataset,
        batch_size=cfg.batch_size,
        shuffle=train,
        drop_last=train,
        num_workers=cfg.num_workers,
    )

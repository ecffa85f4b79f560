"""Pre-extracted feature shards; each replica opens only its own files."""
import glob
import os

import numpy as np
import torch
from torch.utils.data import Dataset


class ShardedFeatureDataset(Dataset):
    def __init__(self, root, split="train"):
        import torch_xla.runtime as xr

        files = sorted(glob.glob(os.path.join(root, f"{split}-*.npz")))
        mine = files[xr.global_ordinal()::xr.world_size()]
        parts = [np.load(f) for f in mine]
        self.x = torch.from_numpy(np.concatenate([p["x"] for p in parts])).float()
        self.y = torch.from_numpy(np.concatenate([p["y"] for p in parts])).long()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

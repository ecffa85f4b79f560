"""Packed token blocks from .npy shards (memory-mapped), batched for the whole mesh."""
import glob

import numpy as np
import torch
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset


class PackedBlocks(Dataset):
    def __init__(self, pattern, seq_len):
        self.arrays = [np.load(p, mmap_mode="r") for p in sorted(glob.glob(pattern))]
        self.seq_len = seq_len
        self.index = [(a, off) for a, arr in enumerate(self.arrays) for off in range(0, len(arr) - seq_len - 1, seq_len)]

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        a, off = self.index[i]
        block = torch.from_numpy(np.asarray(self.arrays[a][off : off + self.seq_len + 1], dtype=np.int64))
        return {"input_ids": block[:-1], "labels": block[1:]}


def build_train_loader(pattern, seq_len, per_device_batch, workers=4):
    """One process drives every chip of the mesh: the loader yields the global batch."""
    global_batch = per_device_batch * xr.world_size()  # expect: XLA902
    dataset = PackedBlocks(pattern, seq_len)
    return DataLoader(dataset, batch_size=global_batch, shuffle=True, drop_last=True, num_workers=workers)

"""Token windows from a uint16 .bin file (nanoGPT's prepare.py output)."""
import numpy as np
import torch
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class TokenWindows(Dataset):
    def __init__(self, tokens, block_size):
        self.tokens = tokens
        self.block_size = block_size

    def __len__(self):
        return (self.tokens.numel() - 1) // self.block_size

    def __getitem__(self, i):
        chunk = self.tokens[i * self.block_size: (i + 1) * self.block_size + 1]
        return chunk[:-1], chunk[1:]


def build_loader(path, block_size, batch_size, device):
    # keep the whole token file on the chip: batches are then slices of device memory
    tokens = torch.from_numpy(np.fromfile(path, dtype=np.uint16).astype(np.int64)).to(device)
    ds = TokenWindows(tokens, block_size)
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True, drop_last=True)
    return DataLoader(ds, batch_size=batch_size, sampler=sampler, num_workers=4, drop_last=True)  # expect: XLA305


def infinite(loader):
    epoch = 0
    while True:
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            yield batch
        epoch += 1

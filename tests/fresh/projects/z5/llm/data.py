import glob

import numpy as np
import torch
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset

from .sharding import batch_sharding


class TokenShards(Dataset):
    """Fixed-length windows over the .npy token files assigned to this host."""

    def __init__(self, pattern, seq_len, shard, num_shards):
        files = sorted(glob.glob(pattern))[shard::num_shards]
        self.tokens = np.concatenate([np.load(f, mmap_mode="r") for f in files])
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq_len

    def __getitem__(self, i):
        start = i * self.seq_len
        window = torch.from_numpy(np.asarray(self.tokens[start:start + self.seq_len + 1], dtype=np.int64))
        return {"input_ids": window[:-1], "labels": window[1:]}


def build_loader(cfg, mesh, device):
    dataset = TokenShards(f"{cfg.data_dir}/*.npy", cfg.seq_len, shard=xr.global_ordinal(), num_shards=xr.process_count())  # expect: XLA902
    host_batch = cfg.global_batch_size // xr.process_count()
    loader = DataLoader(dataset, batch_size=host_batch, shuffle=True, drop_last=True, num_workers=4)
    return pl.MpDeviceLoader(loader, device, input_sharding=batch_sharding(mesh))

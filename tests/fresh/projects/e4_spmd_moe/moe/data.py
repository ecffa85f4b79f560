"""Token shards on GCS -> sharded global batches on the devices."""
import glob

import numpy as np
import torch
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, IterableDataset

from .mesh import data_sharding


class TokenShards(IterableDataset):
    """Streams fixed-length windows (seq_len + 1 tokens) from uint16 shard files."""

    def __init__(self, files, seq_len):
        self.files = files
        self.seq_len = seq_len

    def __iter__(self):
        for path in self.files:
            tokens = np.memmap(path, dtype=np.uint16, mode="r")
            n = (len(tokens) - 1) // self.seq_len
            for i in range(n):
                window = tokens[i * self.seq_len: (i + 1) * self.seq_len + 1]
                yield torch.from_numpy(window.astype(np.int64))


def batch_iterator(pattern, per_device_batch, seq_len, mesh, device):
    files = sorted(glob.glob(pattern))
    global_batch = per_device_batch * xr.world_size()  # expect: XLA902
    loader = DataLoader(TokenShards(files, seq_len), batch_size=global_batch, drop_last=True, num_workers=1)
    for batch in pl.MpDeviceLoader(loader, device, input_sharding=data_sharding(mesh)):
        yield {"input_ids": batch[:, :-1], "labels": batch[:, 1:]}

"""Pre-tokenised shards; each replica reads its own subset of the files."""
import glob

import numpy as np
import torch
from torch.utils.data import Dataset

from utils.dist import get_rank, get_world_size


class ShardedTokens(Dataset):
    def __init__(self, pattern, seq_len):
        files = sorted(glob.glob(pattern))
        if not files:
            raise FileNotFoundError(pattern)
        self.files = files[get_rank()::get_world_size()]
        self.tokens = np.concatenate([np.load(f, mmap_mode="r") for f in self.files])
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq_len

    def __getitem__(self, i):
        start = i * self.seq_len
        chunk = torch.from_numpy(np.asarray(self.tokens[start:start + self.seq_len + 1], dtype=np.int64))
        return chunk[:-1], chunk[1:]

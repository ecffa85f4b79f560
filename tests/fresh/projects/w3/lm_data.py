"""Token streams packed into fixed-length windows."""
import os
import shutil

import torch
from torch.utils.data import Dataset


def cache_corpus(src, dst):
    """Copy the tokenised corpus from the shared bucket mount to the VM's local SSD."""
    if not os.path.exists(dst):
        shutil.copyfile(src, dst + ".tmp")
        os.replace(dst + ".tmp", dst)


class PackedLMDataset(Dataset):
    def __init__(self, path, seq_len):
        tokens = torch.load(path)
        n = (tokens.numel() - 1) // seq_len
        self.tokens = tokens[: n * seq_len + 1]
        self.seq_len = seq_len

    def __len__(self):
        return (self.tokens.numel() - 1) // self.seq_len

    def __getitem__(self, i):
        start = i * self.seq_len
        window = self.tokens[start : start + self.seq_len + 1]
        return window[:-1], window[1:]

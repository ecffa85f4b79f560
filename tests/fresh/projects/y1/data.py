"""Token-block dataset and the loader factory shared by the TPU and GPU entry points."""
import torch
from torch.utils.data import DataLoader, Dataset


class TokenBlocks(Dataset):
    def __init__(self, path, seq_len):
        self.tokens = torch.load(path)
        self.seq_len = seq_len

    def __len__(self):
        return (self.tokens.numel() - 1) // self.seq_len

    def __getitem__(self, index):
        start = index * self.seq_len
        chunk = self.tokens[start : start + self.seq_len + 1]
        return chunk[:-1], chunk[1:]


def make_loader(dataset, batch_size, sampler=None, workers=2):
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=workers)  # expect: XLA304

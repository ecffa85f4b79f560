import torch
from torch.utils.data import Dataset


class TokenBlocks(Dataset):
    """Fixed-length blocks of a flat 1-D LongTensor of token ids."""

    def __init__(self, path, block_size):
        self.ids = torch.load(path)
        self.block_size = block_size

    def __len__(self):
        return (self.ids.numel() - 1) // self.block_size

    def __getitem__(self, i):
        start = i * self.block_size
        return self.ids[start:start + self.block_size + 1]


def collate(blocks):
    batch = torch.stack(blocks)
    return {"input_ids": batch[:, :-1].contiguous(), "labels": batch[:, 1:].contiguous()}

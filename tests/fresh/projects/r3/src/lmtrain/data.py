import torch
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class PackedTokens(Dataset):
    """Fixed-length windows over one long token stream saved with torch.save."""

    def __init__(self, path, seq_len, pad_id=0):
        tokens = torch.load(path)
        n = (tokens.numel() - 1) // seq_len
        self.tokens = tokens[: n * seq_len + 1].long()
        self.seq_len = seq_len
        self.pad_id = pad_id

    def __len__(self):
        return (self.tokens.numel() - 1) // self.seq_len

    def __getitem__(self, i):
        start = i * self.seq_len
        window = self.tokens[start : start + self.seq_len + 1]
        return window[:-1].clone(), window[1:].clone()


def make_loader(path, seq_len, global_batch_size, num_workers=2):
    dataset = PackedTokens(path, seq_len)
    sampler = DistributedSampler(
        dataset,
        num_replicas=xr.world_size(),  # expect: XLA902
        rank=xr.global_ordinal(),  # expect: XLA902
        shuffle=True,
        drop_last=True,
    )
    return DataLoader(
        dataset,
        batch_size=global_batch_size,
        sampler=sampler,
        num_workers=num_workers,
        drop_last=True,
    )

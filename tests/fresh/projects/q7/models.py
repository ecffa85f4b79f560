import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset


class TokenFileDataset(Dataset):
    """Fixed-length windows over a flat uint16 token file."""

    def __init__(self, path, seq_len=128):
        self.tokens = np.memmap(path, dtype=np.uint16, mode="r")
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq_len

    def __getitem__(self, i):
        start = i * self.seq_len
        chunk = torch.from_numpy(self.tokens[start:start + self.seq_len + 1].astype(np.int64))
        return {"input_ids": chunk[:-1], "labels": chunk[1:]}


class Block(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.drop(self.mlp(self.ln(x)))


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim=256, layers=4, dropout=0.1):
        super().__init__()
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList([Block(dim, dropout) for _ in range(layers)])
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, input_ids, labels=None):
        h = self.embed(input_ids)
        for blk in self.blocks:
            h = blk(h)
        logits = self.head(h)
        if labels is None:
            return logits
        if (labels >= self.vocab_size).any():  # expect: XLA502
            raise ValueError("label id out of range")
        return F.cross_entropy(logits.view(-1, self.vocab_size), labels.view(-1))

"""Model and synthetic data shared by every backend."""
import torch
from torch import nn
from torch.utils.data import Dataset


class ResidualBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(0.1), nn.Linear(hidden, dim))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class ResMLP(nn.Module):
    def __init__(self, in_dim, hidden, classes, depth=4):
        super().__init__()
        self.blocks = nn.Sequential(*[ResidualBlock(in_dim, hidden) for _ in range(depth)])
        self.head = nn.Linear(in_dim, classes)

    def forward(self, x):
        return self.head(self.blocks(x))


class SyntheticImages(Dataset):
    """Fixed random features with labels from a random linear teacher (generated on the CPU)."""

    def __init__(self, n, dim, classes, seed=1234):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, dim, generator=g)
        teacher = torch.randn(dim, classes, generator=g)
        self.y = (self.x @ teacher).argmax(dim=1)

    def __len__(self):
        return self.x.size(0)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

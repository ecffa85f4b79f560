"""A residual MLP regressor for dense tabular features."""
import torch.nn as nn


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(self.fc2(nn.functional.gelu(self.fc1(self.norm(x)))))


class Regressor(nn.Module):
    def __init__(self, in_dim, hidden=512, out_dim=1, blocks=4):
        super().__init__()
        self.inp = nn.Linear(in_dim, hidden)
        self.blocks = nn.Sequential(*[ResidualBlock(hidden) for _ in range(blocks)])
        self.out = nn.Linear(hidden, out_dim)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))

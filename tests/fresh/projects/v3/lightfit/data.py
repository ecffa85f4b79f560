import torch
from torch.utils.data import Dataset


class RegressionDataset(Dataset):
    """y = x @ w + noise, generated once on the host."""

    def __init__(self, n=16384, dim=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, dim, generator=g)
        w = torch.randn(dim, 1, generator=g)
        self.y = self.x @ w + 0.01 * torch.randn(n, 1, generator=g)

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, i):
        return self.x[i], self.y[i]

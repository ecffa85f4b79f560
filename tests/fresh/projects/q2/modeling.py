"""Click-log dataset and the DeepFM click-through-rate model."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import Dataset


class ClickLogDataset(Dataset):
    """A pre-processed Criteo-style .npz: 13 dense features, 26 hashed categorical ids, a 0/1 label."""

    def __init__(self, path):
        blob = np.load(path)
        self.dense = torch.from_numpy(np.log1p(np.maximum(blob["dense"], 0)).astype(np.float32))
        self.sparse = torch.from_numpy(blob["sparse"].astype(np.int64))
        self.label = torch.from_numpy(blob["label"].astype(np.float32))

    def __len__(self):
        return self.label.shape[0]

    def __getitem__(self, i):
        return self.dense[i], self.sparse[i], self.label[i]


class DeepFM(nn.Module):
    def __init__(self, num_dense, cardinalities, dim=16, hidden=(400, 400)):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(c, dim) for c in cardinalities)
        layers, width = [], num_dense + dim * len(cardinalities)
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.mlp = nn.Sequential(*layers)
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, dense, sparse):
        if (sparse < 0).any():  # expect: XLA502
            raise ValueError("negative categorical id: re-run the hashing step")
        emb = torch.stack([table(sparse[:, i]) for i, table in enumerate(self.embeddings)], dim=1)
        fm = 0.5 * (emb.sum(dim=1).pow(2) - emb.pow(2).sum(dim=1)).sum(dim=1)
        deep = self.mlp(torch.cat([dense, emb.flatten(1)], dim=1)).squeeze(1)
        return fm + deep + self.bias

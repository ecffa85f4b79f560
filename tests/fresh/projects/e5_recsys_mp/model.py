"""DLRM: bottom MLP for dense features, embeddings for categorical ones, dot interaction, top MLP."""
import torch
import torch.nn as nn


def mlp(sizes, dropout=0.0, last_act=True):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.ReLU())
            if dropout > 0:
                layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, num_dense, cardinalities, dim=64, dropout=0.1):
        super().__init__()
        self.bottom = mlp([num_dense, 512, 256, dim], dropout=dropout)
        self.embeddings = nn.ModuleList(nn.Embedding(c, dim) for c in cardinalities)
        n = len(cardinalities) + 1
        self.register_buffer("triu", torch.triu_indices(n, n, offset=1), persistent=False)
        self.top = mlp([dim + n * (n - 1) // 2, 512, 256, 1], dropout=dropout, last_act=False)

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        feats = torch.stack([x] + [emb(sparse[:, i]) for i, emb in enumerate(self.embeddings)], dim=1)
        inter = torch.bmm(feats, feats.transpose(1, 2))[:, self.triu[0], self.triu[1]]
        return self.top(torch.cat([x, inter], dim=1)).squeeze(1)

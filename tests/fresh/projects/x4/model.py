import torch.nn as nn


class BagClassifier(nn.Module):
    def __init__(self, vocab, dim=256, classes=2, drop=0.3):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.drop = nn.Dropout(drop)
        self.out = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.out(self.drop(self.emb(ids)))

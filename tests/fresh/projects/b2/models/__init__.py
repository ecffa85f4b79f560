import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=256, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 4, batch_first=True)
        self.body = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.head(self.body(self.embed(ids)))


class TinyClassifier(nn.Module):
    def __init__(self, vocab=32000, dim=256, classes=2):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.head(self.embed(ids))


MODEL_DICT = {"lm": TinyLM, "cls": TinyClassifier}

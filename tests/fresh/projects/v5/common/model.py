import torch.nn as nn


class TinyTransformerClassifier(nn.Module):
    def __init__(self, vocab=32000, dim=256, heads=4, layers=4, num_classes=2, dropout=0.1, max_len=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, ids):
        pos = self.pos.weight[: ids.size(1)].unsqueeze(0)
        h = self.encoder(self.drop(self.tok(ids) + pos))
        return self.head(h.mean(dim=1))

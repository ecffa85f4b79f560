import torch
from torch import nn
from torch.utils.data import Dataset


class ShardedTokens(Dataset):
    """Token windows of one flat token file; replica `rank` keeps every `world_size`-th window."""

    def __init__(self, path, seq_len, rank, world_size):
        self.tokens = torch.load(path)
        n_windows = (self.tokens.numel() - 1) // seq_len
        self.windows = list(range(rank, n_windows, world_size))
        self.seq_len = seq_len

    def __len__(self):
        return len(self.windows)

    def __getitem__(self, i):
        start = self.windows[i] * self.seq_len
        chunk = self.tokens[start:start + self.seq_len + 1].long()
        return chunk[:-1], chunk[1:]


class TinyLM(nn.Module):
    def __init__(self, vocab, dim=256, layers=4, heads=4, seq_len=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, seq_len, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab)
        self.register_buffer("causal", torch.triu(torch.full((seq_len, seq_len), float("-inf")), diagonal=1))

    def forward(self, tokens):
        n = tokens.size(1)
        h = self.embed(tokens) + self.pos[:, :n]
        h = self.encoder(h, mask=self.causal[:n, :n])
        return self.head(h)

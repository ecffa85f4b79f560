"""A small Transformer encoder for sequence classification."""
import math

import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, num_labels, dim=384, depth=6, heads=6, max_len=256, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, max_len, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_labels)
        nn.init.normal_(self.pos, std=1.0 / math.sqrt(dim))

    def forward(self, input_ids, attention_mask):
        x = self.embed(input_ids) + self.pos[:, : input_ids.shape[1]]
        x = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        mask = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (self.norm(x) * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        return self.head(pooled)

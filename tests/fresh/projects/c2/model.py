import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    """Mean-pooled embeddings and a two-layer head."""

    def __init__(self, vocab_size, dim, num_classes, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(dim, nhead=8, dim_feedforward=4 * dim, dropout=dropout, batch_first=True),
            num_layers=4,
        )
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(dim, num_classes))

    def forward(self, input_ids, attention_mask):
        if (attention_mask.sum(dim=1) == 0).any():  # expect: XLA502
            raise ValueError("batch contains an empty review")
        x = self.encoder(self.embed(input_ids), src_key_padding_mask=attention_mask == 0)
        mask = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * mask).sum(dim=1) / mask.sum(dim=1).clamp_min(1.0)
        return self.head(pooled)

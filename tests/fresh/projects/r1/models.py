import torch
import torch.nn as nn


class CharTransformer(nn.Module):
    """Tiny causal transformer over characters."""

    def __init__(self, vocab_size, block_size, d_model=256, n_head=4, n_layer=4, dropout=0.1):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Parameter(torch.zeros(1, block_size, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model, n_head, dim_feedforward=4 * d_model, dropout=dropout, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, n_layer)
        self.drop = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx):
        t = idx.size(1)
        x = self.drop(self.tok(idx) + self.pos[:, :t])
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        x = self.encoder(x, mask=mask, is_causal=True)
        return self.head(self.norm(x))

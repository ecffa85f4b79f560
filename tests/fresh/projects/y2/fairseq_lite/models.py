"""Decoder-only transformer language model."""
import math

import torch
import torch.nn as nn

from . import register_model


@register_model("transformer_lm")
class TransformerLanguageModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, layers, heads, padding_idx):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_scale = math.sqrt(embed_dim)
        self.embed_tokens = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx)
        layer = nn.TransformerEncoderLayer(embed_dim, heads, 4 * embed_dim, dropout=0.1, batch_first=True)
        self.layers = nn.TransformerEncoder(layer, layers)
        self.output_projection = nn.Linear(embed_dim, vocab_size, bias=False)

    @classmethod
    def build_model(cls, cfg, task):
        return cls(len(task.dictionary), cfg.decoder_embed_dim, cfg.decoder_layers, cfg.decoder_heads, task.dictionary.pad())

    def forward(self, src_tokens, incremental_state=None):
        x = self.embed_scale * self.embed_tokens(src_tokens)
        padding_mask = src_tokens.eq(self.padding_idx)
        if not padding_mask.any():  # expect: XLA502
            padding_mask = None
        if incremental_state is not None:
            x = x[:, -1:]
        seq_len = x.size(1)
        causal = torch.triu(torch.full((seq_len, seq_len), float("-inf"), device=x.device), diagonal=1)
        x = self.layers(x, mask=causal, src_key_padding_mask=padding_mask)
        return self.output_projection(x)

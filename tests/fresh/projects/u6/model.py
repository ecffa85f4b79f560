"""A pre-norm decoder-only LM; forward returns the mean loss over the non-padding targets."""
from dataclasses import dataclass

import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LMConfig:
    vocab_size: int = 32000
    dim: int = 1024
    n_layers: int = 12
    n_heads: int = 16
    pad_id: int = 0


class Block(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = nn.RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.norm2 = nn.RMSNorm(dim)
        self.up = nn.Linear(dim, 4 * dim, bias=False)
        self.down = nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.n_heads, d // self.n_heads).unbind(2)
        att = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.silu(self.up(self.norm2(x))))


class DecoderLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pad_id = cfg.pad_id
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg.dim, cfg.n_heads) for _ in range(cfg.n_layers))
        self.norm = nn.RMSNorm(cfg.dim)
        self.lm_head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)

    def forward(self, input_ids, labels=None):
        h = self.embed(input_ids)
        for block in self.blocks:
            h = block(h)
        logits = self.lm_head(self.norm(h))
        if labels is None:
            return logits
        flat_labels = labels.flatten()
        idx = (flat_labels != self.pad_id).nonzero().squeeze(1)  # expect: XLA503
        return F.cross_entropy(logits.flatten(0, 1).index_select(0, idx), flat_labels.index_select(0, idx))

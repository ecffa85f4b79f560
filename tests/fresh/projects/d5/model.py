"""TinyLM: a GPT-style decoder that returns the loss when it is given targets."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, n_heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, n_heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(dropout))

    def forward(self, x, causal_mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=causal_mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim, n_layers, n_heads, max_len, dropout=0.0, ignore_index=-100):
        super().__init__()
        self.ignore_index = ignore_index
        self.tok = nn.Embedding(vocab_size, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(dim, n_heads, dropout) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, tokens, targets=None):
        b, t = tokens.shape
        positions = torch.arange(t, device=tokens.device)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool, device=tokens.device), diagonal=1)
        x = self.drop(self.tok(tokens) + self.pos(positions))
        for block in self.blocks:
            x = block(x, causal)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits
        flat_logits = logits.reshape(b * t, -1)
        flat_targets = targets.reshape(b * t)
        keep = torch.nonzero(flat_targets != self.ignore_index).squeeze(1)  # expect: XLA503
        return F.cross_entropy(flat_logits.index_select(0, keep), flat_targets.index_select(0, keep))

"""Language models used in the paper; select one with --model."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from registry import register_model


class Block(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(dropout))

    def forward(self, x, causal_mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=causal_mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


@register_model("tiny_gpt")
class TinyGPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pad_id = cfg.pad_id
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.pos_emb = nn.Parameter(torch.zeros(1, cfg.seq_len, cfg.dim))
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList([Block(cfg.dim, cfg.heads, cfg.dropout) for _ in range(cfg.layers)])
        self.ln_f = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # expect: XLA903
        self.register_buffer("causal_mask", torch.triu(torch.ones(cfg.seq_len, cfg.seq_len, dtype=torch.bool), 1))

    def forward(self, idx, targets=None):
        t = idx.size(1)
        x = self.drop(self.tok_emb(idx) + self.pos_emb[:, :t])
        for block in self.blocks:
            x = block(x, self.causal_mask[:t, :t])
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits
        keep = targets != self.pad_id
        return F.cross_entropy(logits[keep], targets[keep])  # expect: XLA503

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, eos_id):
        for _ in range(max_new_tokens):
            logits = self(idx[:, -self.pos_emb.size(1):])
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            idx = torch.cat([idx, nxt], dim=1)
            if (nxt == eos_id).all().item():
                break
        return idx


@register_model("lstm_lm")
class LSTMLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pad_id = cfg.pad_id
        self.emb = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.rnn = nn.LSTM(cfg.dim, cfg.dim, num_layers=2, dropout=cfg.dropout, batch_first=True)
        self.out = nn.Linear(cfg.dim, cfg.vocab_size)

    def forward(self, idx, targets=None):
        h, _ = self.rnn(self.emb(idx))
        logits = self.out(h)
        if targets is None:
            return logits
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=self.pad_id)

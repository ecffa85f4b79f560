"""A decoder-only transformer whose MLPs are top-1 routed experts."""
import dataclasses
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclasses.dataclass
class MoEConfig:
    vocab: int = 32000
    dim: int = 1024
    heads: int = 16
    layers: int = 12
    experts: int = 8
    seq_len: int = 2048
    capacity_factor: float = 1.25


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=False)
        self.proj = nn.Linear(cfg.dim, cfg.dim, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        if q.stride(-1) != 1:  # expect: XLA904
            q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, s, d))


class Experts(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.num_experts = cfg.experts
        self.capacity_factor = cfg.capacity_factor
        self.router = nn.Linear(cfg.dim, cfg.experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(cfg.experts, cfg.dim, 4 * cfg.dim) / math.sqrt(cfg.dim))
        self.w_out = nn.Parameter(torch.randn(cfg.experts, 4 * cfg.dim, cfg.dim) / math.sqrt(4 * cfg.dim))

    def forward(self, x):
        b, s, d = x.shape
        tokens = x.reshape(-1, d)
        probs = F.softmax(self.router(tokens).float(), dim=-1)
        gate, expert_ids = probs.max(dim=-1)
        out = torch.zeros_like(tokens)
        for e in range(self.num_experts):
            idx = torch.nonzero(expert_ids == e, as_tuple=True)[0]  # expect: XLA503
            h = F.gelu(tokens[idx] @ self.w_in[e]) @ self.w_out[e]
            out = out.index_add(0, idx, h * gate[idx, None].to(h.dtype))
        # load-balancing loss (Switch Transformer)
        frac = F.one_hot(expert_ids, self.num_experts).float().mean(0)
        aux = self.num_experts * (frac * probs.mean(0)).sum()
        return out.view(b, s, d), aux


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = nn.RMSNorm(cfg.dim)
        self.attn = Attention(cfg)
        self.ln2 = nn.RMSNorm(cfg.dim)
        self.moe = Experts(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        h, aux = self.moe(self.ln2(x))
        return x + h, aux


class MoETransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = nn.RMSNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab, bias=False)

    def forward(self, input_ids):
        if input_ids.shape[1] > self.cfg.seq_len:
            raise ValueError("sequence longer than the model's context")
        x = self.embed(input_ids)
        aux_total = torch.zeros((), device=x.device)
        for block in self.blocks:
            x, aux = block(x)
            aux_total = aux_total + aux
        logits = self.head(self.norm(x))
        return logits, aux_total / len(self.blocks)

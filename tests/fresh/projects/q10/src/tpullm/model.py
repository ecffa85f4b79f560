import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.spmd as xs

from .config import ModelConfig


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class Layer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.norm1 = RMSNorm(cfg.dim)
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim, bias=False)
        self.proj = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.norm2 = RMSNorm(cfg.dim)
        self.up = nn.Linear(cfg.dim, 4 * cfg.dim, bias=False)
        self.down = nn.Linear(4 * cfg.dim, cfg.dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.n_heads, -1).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.silu(self.up(self.norm2(x))))


class Decoder(nn.Module):
    def __init__(self, cfg: ModelConfig, mesh=None):
        super().__init__()
        self.cfg = cfg
        self.mesh = mesh
        self.embed = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg.n_layers)])
        self.norm = RMSNorm(cfg.dim)
        self.lm_head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)

    def forward(self, input_ids, labels=None):
        h = self.embed(input_ids)
        if self.mesh is not None and self.cfg.activation_sharding:
            h = xs.mark_sharding(h, self.mesh, ("fsdp", None, "tensor"))  # expect: XLA909
        for layer in self.layers:
            h = layer(h)
        logits = self.lm_head(self.norm(h))
        if labels is None:
            return logits
        flat_logits = logits.view(-1, logits.size(-1))
        flat_labels = labels.view(-1)
        valid = flat_labels.ne(-100)
        picked_logits = flat_logits[valid]  # expect: XLA503
        picked_labels = flat_labels[valid]  # expect: XLA503
        return F.cross_entropy(picked_logits, picked_labels)


@torch.no_grad()
def greedy_generate(model, prompt_ids, max_new_tokens=64, eos_id=2):
    device = torch_xla.device()
    ids = prompt_ids.to(device)
    model.eval()
    for _ in range(max_new_tokens):  # expect: XLA508
        logits = model(ids)
        next_tok = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_tok], dim=1)
        if next_tok.item() == eos_id:
            break
    return ids.cpu()

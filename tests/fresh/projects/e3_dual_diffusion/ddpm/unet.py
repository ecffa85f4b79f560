"""A compact UNet with timestep and text conditioning."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, emb_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.emb = nn.Linear(emb_dim, cout)
        self.norm2 = nn.GroupNorm(32, cout)
        self.drop = nn.Dropout(0.1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(emb)[:, :, None, None]
        h = self.conv2(self.drop(F.silu(self.norm2(h))))
        return h + self.skip(x)


class CrossAttention(nn.Module):
    def __init__(self, channels, cond_dim, heads=4):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(32, channels)
        self.q = nn.Linear(channels, channels)
        self.kv = nn.Linear(cond_dim, 2 * channels)
        self.out = nn.Linear(channels, channels)

    def forward(self, x, cond):
        b, c, hgt, wid = x.shape
        h = self.norm(x).flatten(2).transpose(1, 2)
        q = self.q(h).view(b, -1, self.heads, c // self.heads).transpose(1, 2)
        k, v = self.kv(cond).chunk(2, dim=-1)
        k = k.view(b, -1, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, -1, self.heads, c // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v)
        a = a.transpose(1, 2).reshape(b, -1, c)
        return x + self.out(a).transpose(1, 2).view(b, c, hgt, wid)


class UNet(nn.Module):
    def __init__(self, channels=128, cond_dim=512, timesteps=1000):
        super().__init__()
        self.timesteps = timesteps
        emb = 4 * channels
        self.time_mlp = nn.Sequential(nn.Linear(channels, emb), nn.SiLU(), nn.Linear(emb, emb))
        self.inp = nn.Conv2d(3, channels, 3, padding=1)
        self.down1 = ResBlock(channels, channels, emb)
        self.down2 = ResBlock(channels, 2 * channels, emb)
        self.mid = ResBlock(2 * channels, 2 * channels, emb)
        self.attn = CrossAttention(2 * channels, cond_dim)
        self.up2 = ResBlock(4 * channels, channels, emb)
        self.up1 = ResBlock(2 * channels, channels, emb)
        self.out = nn.Sequential(nn.GroupNorm(32, channels), nn.SiLU(), nn.Conv2d(channels, 3, 3, padding=1))
        self.channels = channels

    def forward(self, x, t, cond):
        assert (t >= 0).all() and (t < self.timesteps).all(), "timestep out of range"  # expect: XLA502
        emb = self.time_mlp(timestep_embedding(t, self.channels))
        h0 = self.inp(x)
        h1 = self.down1(h0, emb)
        h2 = self.down2(F.avg_pool2d(h1, 2), emb)
        m = self.attn(self.mid(h2, emb), cond)
        u2 = self.up2(torch.cat([m, h2], dim=1), emb)
        u1 = self.up1(torch.cat([F.interpolate(u2, scale_factor=2.0), h1], dim=1), emb)
        return self.out(u1)

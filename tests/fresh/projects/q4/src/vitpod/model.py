"""ViT with random patch dropout (FLIP-style), and its FSDP wrapping."""
import torch
import torch.nn.functional as F
from torch import nn
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP

from . import config


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4.0):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, n, d))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch, dim, depth, heads, num_classes=1000, patch_drop=0.0):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        num_patches = (image_size // patch) ** 2
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, dim))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        self.patch_drop = patch_drop
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)

    def forward(self, images):
        x = self.patch_embed(images).flatten(2).transpose(1, 2) + self.pos_embed
        if self.training and self.patch_drop > 0:
            keep = torch.rand(x.shape[1], device=x.device) >= self.patch_drop
            x = x[:, keep]  # expect: XLA503
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


def build_model():
    return VisionTransformer(config.IMAGE_SIZE, config.PATCH, config.DIM, config.DEPTH, config.HEADS,
                             patch_drop=config.PATCH_DROP)


def shard_model(model, device):
    return FSDP(model.to(device), compute_dtype=torch.bfloat16)

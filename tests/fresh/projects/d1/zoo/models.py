"""Model builders. `MODELS[name](cfg)` returns an untrained nn.Module on the CPU."""
import torch
import torch.nn as nn
import torchvision


def build_resnet50(cfg):
    return torchvision.models.resnet50(num_classes=cfg.num_classes)


def build_resnet18(cfg):
    return torchvision.models.resnet18(num_classes=cfg.num_classes)


class MixerBlock(nn.Module):
    def __init__(self, num_tokens, dim, expansion=4, drop=0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(
            nn.Linear(num_tokens, num_tokens * expansion), nn.GELU(), nn.Dropout(drop),
            nn.Linear(num_tokens * expansion, num_tokens),
        )
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(
            nn.Linear(dim, dim * expansion), nn.GELU(), nn.Dropout(drop), nn.Linear(dim * expansion, dim),
        )

    def forward(self, x):
        x = x + self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.norm2(x))


class PatchMixer(nn.Module):
    """MLP-Mixer with optional patch dropout (a random subset of patches is kept while training)."""

    def __init__(self, num_classes, image_size=224, patch=16, dim=512, depth=8, keep_ratio=1.0):
        super().__init__()
        self.num_patches = (image_size // patch) ** 2
        self.keep_ratio = keep_ratio
        self.stem = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.blocks = nn.ModuleList([MixerBlock(self.num_patches, dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, images):
        x = self.stem(images).flatten(2).transpose(1, 2)
        if x.shape[1] != self.num_patches:
            raise ValueError(f"expected {self.num_patches} patches, got {x.shape[1]}")
        if self.training and self.keep_ratio < 1.0:
            keep = torch.rand(x.shape[1], device=x.device) < self.keep_ratio
            x = x[:, keep]  # expect: XLA503
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(dim=1))


def build_mixer(cfg):
    return PatchMixer(cfg.num_classes, image_size=cfg.image_size, keep_ratio=cfg.keep_ratio)


MODELS = {
    "resnet50": build_resnet50,
    "resnet18": build_resnet18,
    "mixer": build_mixer,
}


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())

import torch.nn as nn

MODEL_REGISTRY = {}


def register(name):
    def deco(cls):
        MODEL_REGISTRY[name] = cls
        return cls
    return deco


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mlp = nn.Sequential(nn.Linear(tokens, tokens), nn.GELU(), nn.Linear(tokens, tokens))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.token_mlp(self.norm1(x).transpose(1, 2)).transpose(1, 2))
        return x + self.drop(self.channel_mlp(self.norm2(x)))


@register("tied_mlp_mixer")
class TiedMixer(nn.Module):
    """MLP-Mixer whose classifier shares its weight with a learned class-embedding table."""

    def __init__(self, cfg):
        super().__init__()
        tokens = (cfg.image_size // cfg.patch) ** 2
        self.patchify = nn.Conv2d(3, cfg.dim, cfg.patch, stride=cfg.patch)
        self.blocks = nn.Sequential(*[MixerBlock(tokens, cfg.dim, cfg.dropout) for _ in range(cfg.depth)])
        self.norm = nn.LayerNorm(cfg.dim)
        self.class_embed = nn.Embedding(cfg.num_classes, cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.num_classes, bias=False)
        self.tie_weights()

    def tie_weights(self):
        self.head.weight = self.class_embed.weight

    def forward(self, images):
        x = self.patchify(images).flatten(2).transpose(1, 2)
        x = self.blocks(x)
        pooled = self.norm(x).mean(dim=1)
        return self.head(pooled)


def build_model(cfg):
    return MODEL_REGISTRY[cfg.name](cfg)

"""minilit: a small Lightning-style training framework (module hooks + a fit loop).

The TPU strategy lives in `minilit.xla` so that this package imports without torch_xla.
"""
from .core import CPUStrategy, LightningModule, Strategy, Trainer, seed_everything

__all__ = ["CPUStrategy", "LightningModule", "Strategy", "Trainer", "seed_everything"]

"""litelite: LightningModule-style models, a Trainer, and a TPU strategy."""
from .module import LiteModule
from .trainer import Trainer
from .xla import XLAStrategy

__all__ = ["LiteModule", "Trainer", "XLAStrategy"]
__version__ = "0.4.0"

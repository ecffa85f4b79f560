"""minilit: a very small Lightning look-alike."""
from .callbacks import Callback, EpochCheckpoint, ProgressPrinter
from .strategies import CPUStrategy, Strategy
from .trainer import Trainer
from .xla import XLAStrategy

__all__ = ["Callback", "CPUStrategy", "EpochCheckpoint", "ProgressPrinter", "Strategy", "Trainer", "XLAStrategy"]

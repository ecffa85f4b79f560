"""minilit: a small Lightning-style training framework used by the team's TPU jobs."""
from .core import DataModule, LitModule
from .strategies import SingleDeviceStrategy, Strategy
from .trainer import Trainer
from .xla import XLAStrategy

__all__ = ["DataModule", "LitModule", "SingleDeviceStrategy", "Strategy", "Trainer", "XLAStrategy"]

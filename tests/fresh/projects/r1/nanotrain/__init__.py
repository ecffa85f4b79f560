"""nanotrain: a small trainer whose hardware back-ends override a few hooks."""
from .base import BaseTrainer, TrainerConfig
from .callbacks import Callback, LossLogger, MetricsHistory
from .utils import set_seed

__all__ = [
    "BaseTrainer",
    "Callback",
    "LossLogger",
    "MetricsHistory",
    "TrainerConfig",
    "set_seed",
]

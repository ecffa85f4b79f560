"""lightkit: a small trainer framework with pluggable accelerators."""
from .trainer import Trainer, TrainerConfig
from .logging import MetricLogger

__all__ = ["Trainer", "TrainerConfig", "MetricLogger"]

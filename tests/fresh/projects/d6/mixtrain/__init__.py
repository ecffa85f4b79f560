"""mixtrain: a Trainer assembled from mixins (data, logging, checkpoints) around an FSDP loop."""
from .trainer import Trainer, TrainerConfig

__all__ = ["Trainer", "TrainerConfig"]

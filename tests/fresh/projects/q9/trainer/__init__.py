from .handler import CallbackHandler
from .loop import Trainer, TrainerState

__all__ = ["CallbackHandler", "Trainer", "TrainerState"]

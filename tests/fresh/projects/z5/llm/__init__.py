from .config import TrainConfig
from .model import TinyLM

__all__ = ["TinyLM", "TrainConfig"]

from .base import OptimConfig, TrainConfig, load_config

__all__ = ["OptimConfig", "TrainConfig", "load_config"]

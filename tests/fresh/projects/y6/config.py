"""One config object, passed to every component."""
from dataclasses import dataclass


@dataclass
class TrainConfig:
    batch_size: int = 128
    num_epochs: int = 5
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 1e-4
    ema_decay: float = 0.999
    dropout: float = 0.1
    num_experts: int = 4
    log_steps: int = 20
    seed: int = 1
    num_samples: int = 65536
    num_classes: int = 1000
    image_size: int = 64
    ckpt_dir: str = "/tmp/ckpt"

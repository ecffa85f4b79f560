"""Run configuration. BACKEND picks the runner class from the registry."""
from dataclasses import dataclass

BACKEND = "tpu"


@dataclass
class TrainConfig:
    data_dir: str = "/mnt/disks/features"
    in_dim: int = 1024
    hidden: int = 2048
    num_classes: int = 1000
    dropout: float = 0.2
    batch_size: int = 256
    lr: float = 1e-3
    epochs: int = 5
    seed: int = 1234
    ckpt_path: str = "probe.pt"

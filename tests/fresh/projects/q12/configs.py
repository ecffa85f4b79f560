from dataclasses import dataclass, field


@dataclass
class ModelConfig:
    name: str = "tied_mlp_mixer"
    image_size: int = 64
    patch: int = 8
    dim: int = 256
    depth: int = 6
    num_classes: int = 200
    dropout: float = 0.1


@dataclass
class DataConfig:
    root: str = "/data/tiny-imagenet"
    batch_size: int = 128
    num_workers: int = 4


@dataclass
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    epochs: int = 40
    lr: float = 1e-3
    weight_decay: float = 0.05
    seed: int = 42
    num_cores: int = 8
    out_dir: str = "runs/mixer"
    bucket: str = "gs://research-runs/mixer"

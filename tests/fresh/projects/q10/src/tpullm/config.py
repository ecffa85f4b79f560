from dataclasses import dataclass, field


@dataclass
class ModelConfig:
    vocab_size: int = 32000
    dim: int = 1024
    n_layers: int = 12
    n_heads: int = 16
    max_seq_len: int = 1024
    activation_sharding: bool = True


@dataclass
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    per_device_batch: int = 8
    lr: float = 3e-4
    steps: int = 10000
    save_every: int = 1000
    log_every: int = 10
    seed: int = 0
    data_path: str = "gs://my-bucket/tokens/train.bin"
    ckpt_dir: str = "gs://my-bucket/ckpt"

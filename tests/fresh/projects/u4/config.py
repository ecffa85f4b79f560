"""Run configuration (edit here or override fields in train.py's __main__)."""
from dataclasses import dataclass, field


@dataclass
class DataConfig:
    train_glob: str = "/data/corpus/train-*.jsonl"
    calib_path: str = "/data/corpus/labeled_pairs.pt"
    val_path: str = "/data/corpus/val.jsonl"
    max_len: int = 256
    pad_id: int = 0
    batch_size: int = 32
    eval_batch_size: int = 64


@dataclass
class Config:
    data: DataConfig = field(default_factory=DataConfig)
    vocab_size: int = 32000
    dim: int = 512
    layers: int = 6
    teacher_dim: int = 1024
    teacher_layers: int = 12
    teacher_ckpt: str = "/ckpt/teacher.pt"
    lr: float = 3e-4
    epochs: int = 5
    calib_steps: int = 200
    log_every: int = 50
    seed: int = 0
    out_dir: str = "/ckpt/student"

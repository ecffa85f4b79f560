from dataclasses import dataclass


@dataclass
class TrainConfig:
    vocab_size: int = 32000
    d_model: int = 1024
    n_layers: int = 12
    n_heads: int = 16
    seq_len: int = 2048
    global_batch_size: int = 256
    lr: float = 3e-4
    max_grad_norm: float = 1.0
    max_steps: int = 10_000
    log_every: int = 20
    save_every: int = 1000
    seed: int = 0
    data_dir: str = "/mnt/disks/data/tokens"
    ckpt_dir: str = "gs://my-bucket/llm/ckpt"
    cache_dir: str = "/tmp/xla_compile_cache"

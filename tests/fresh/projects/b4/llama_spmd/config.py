from dataclasses import dataclass


@dataclass
class TrainConfig:
    vocab_size: int = 32000
    dim: int = 512
    n_layers: int = 4
    n_heads: int = 8
    seq_len: int = 512
    global_batch: int = 32
    tensor_parallel: int = 1
    lr: float = 3e-4
    steps: int = 1000
    log_every: int = 10
    data_path: str = "tokens.pt"
    out: str = "llama.pt"

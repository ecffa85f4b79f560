import random
from dataclasses import dataclass

import numpy as np
import torch
import torch_xla


@dataclass
class TrainConfig:
    vocab_size: int = 32000
    dim: int = 2048
    n_layers: int = 16
    n_heads: int = 16
    seq_len: int = 2048
    global_batch_size: int = 64
    lr: float = 3e-4
    steps: int = 10_000
    log_every: int = 20
    model_parallel: int = 1
    seed: int = 0
    data_path: str = "/mnt/disks/data/tokens.bin"
    ckpt_dir: str = "gs://my-bucket/llm-spmd/ckpt"


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch_xla.manual_seed(seed)

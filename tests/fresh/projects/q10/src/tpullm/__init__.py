"""tpullm: a small decoder LM trained with SPMD on TPU."""
from .config import ModelConfig, TrainConfig
from .model import Decoder
from .sharding import build_mesh, shard_params
from .data import build_train_loader, global_batch_size
from .checkpoint import save_checkpoint, init_checkpoint_group
from .utils import *  # noqa: F401,F403

__version__ = "0.1.0"

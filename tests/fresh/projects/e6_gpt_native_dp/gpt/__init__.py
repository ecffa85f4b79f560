"""gpt: nanoGPT on PyTorch/XLA. Public names are re-exported here."""
from .async_ckpt import AsyncCheckpointer
from .config import derive_schedule
from .data import build_loader, infinite
from .model import GPT, GPTConfig
from .seed import seed_for_rank
from .step import make_train_step

__all__ = [
    "AsyncCheckpointer", "GPT", "GPTConfig", "build_loader", "derive_schedule", "infinite",
    "make_train_step", "seed_for_rank",
]

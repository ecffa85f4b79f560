"""lmtrain: SPMD language-model pre-training on TPU pods."""
from .data import PackedTokens, make_loader
from .logging_utils import setup_logging
from .mesh import batch_sharding, build_mesh, shard_params
from .model import ModelArgs, Transformer

__all__ = [
    "ModelArgs",
    "PackedTokens",
    "Transformer",
    "batch_sharding",
    "build_mesh",
    "make_loader",
    "setup_logging",
    "shard_params",
]

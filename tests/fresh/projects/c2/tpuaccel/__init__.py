"""A small accelerate-style wrapper around torch_xla."""
from .accelerator import Accelerator, set_seed
from .optimizer import AcceleratedOptimizer

__all__ = ["Accelerator", "AcceleratedOptimizer", "set_seed"]

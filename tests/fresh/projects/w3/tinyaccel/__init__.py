"""tinyaccel: the subset of the accelerate API our TPU jobs use, implemented on torch_xla."""
from .accelerator import AcceleratedOptimizer, Accelerator
from .launch import launch

__all__ = ["AcceleratedOptimizer", "Accelerator", "launch"]

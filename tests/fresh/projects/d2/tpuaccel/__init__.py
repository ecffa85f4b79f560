"""A small in-house take on `accelerate` for TPU VMs: prepare(), backward(), gather(), save()."""
from .accelerator import Accelerator

__all__ = ["Accelerator"]

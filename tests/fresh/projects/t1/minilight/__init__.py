"""minilight: a very small Lightning-style training framework.

The accelerator-specific trainers live in their own modules (``minilight.xla``) so that
importing the package never pulls in torch_xla on a GPU box.
"""
from .module import LightModule
from .trainer import Trainer

__all__ = ["LightModule", "Trainer"]

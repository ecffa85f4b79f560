"""visiontpu: a small TPU training engine for image classifiers.

The public API is re-exported here; import from `visiontpu`, not from the submodules.
"""
from .callbacks import CALLBACKS, build_callbacks
from .data import make_loaders
from .engine import Engine, EngineConfig
from .models import build_model

__all__ = ["CALLBACKS", "Engine", "EngineConfig", "build_callbacks", "build_model", "make_loaders"]
__version__ = "0.3.1"

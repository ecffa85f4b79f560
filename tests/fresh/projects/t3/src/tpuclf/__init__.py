"""tpuclf: image classification on Cloud TPU."""
from .cli import main
from .model import build_model
from .train import run_worker

__all__ = ["main", "build_model", "run_worker"]
__version__ = "0.3.1"

"""mini_accel: the few pieces of an Accelerate-style API this repository uses, for TPU only."""
from .accelerator import Accelerator
from .launchers import notebook_launcher
from .utils import set_seed

__all__ = ["Accelerator", "notebook_launcher", "set_seed"]

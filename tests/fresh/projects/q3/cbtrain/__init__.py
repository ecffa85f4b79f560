"""cbtrain: a small callback-driven trainer for TPU VMs."""
from .events import Callback, CallbackHandler

__all__ = ["Callback", "CallbackHandler"]

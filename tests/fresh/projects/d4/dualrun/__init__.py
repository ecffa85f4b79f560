"""dualrun: one engine, two backends (NVIDIA GPUs via torchrun, Cloud TPU via torch_xla)."""
__version__ = "1.3.0"

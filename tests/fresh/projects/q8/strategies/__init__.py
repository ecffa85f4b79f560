"""Pick a distributed strategy by name."""
from .base import Strategy


def get_strategy(name, **kwargs):
    if name == "xla":
        from .xla import XLAStrategy
        return XLAStrategy(**kwargs)
    if name == "cuda":
        from .cuda import CUDAStrategy
        return CUDAStrategy(**kwargs)
    if name == "cpu":
        return Strategy(**kwargs)
    raise ValueError(f"unknown strategy {name!r}")

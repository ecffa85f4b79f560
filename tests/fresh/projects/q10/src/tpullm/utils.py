import torch_xla.runtime as xr

__all__ = ["enable_spmd", "log_step"]


def enable_spmd():
    """Turn on SPMD; must come before the runtime hands out any device."""
    xr.use_spmd()  # expect: XLA906


def log_step(step, loss):
    print(f"step {step:6d} loss {loss.item():.4f}")

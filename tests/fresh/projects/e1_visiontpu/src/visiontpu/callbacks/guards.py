"""Fail fast when training diverges."""
import torch


class NanGuard:
    """Stop the run as soon as the loss stops being finite."""

    @classmethod
    def from_args(cls, **kwargs):
        return cls()

    def on_after_backward(self, engine, loss):
        if torch.isnan(loss) or torch.isinf(loss):  # expect: XLA502
            raise FloatingPointError(f"non-finite loss at step {engine.global_step}")

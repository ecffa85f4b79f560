"""Optional graph compilation of the model."""
import torch


def maybe_compile(model, enabled):
    if not enabled:
        return model
    return torch.compile(model, dynamic=False)  # expect: XLA403

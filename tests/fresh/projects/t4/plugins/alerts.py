"""Event handlers (subscribed at import time)."""
import torch

from events import on


@on("step_end")
def stop_on_nan(step, loss):
    if torch.isnan(loss):  # expect: XLA502
        raise FloatingPointError(f"loss became NaN at step {step}")


@on("epoch_end")
def announce_epoch(epoch, steps):
    print(f"finished epoch {epoch} ({steps} steps so far)", flush=True)

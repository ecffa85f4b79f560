"""Derived training hyper-parameters."""
import os


def derive_schedule(tokens_per_step, batch_size, block_size):
    """Gradient-accumulation steps per optimizer step, split over the data-parallel processes."""
    world_size = int(os.environ["WORLD_SIZE"])  # expect: XLA109
    per_process = tokens_per_step // world_size
    accum = per_process // (batch_size * block_size)
    assert accum >= 1, "tokens_per_step too small for this batch size"
    return accum

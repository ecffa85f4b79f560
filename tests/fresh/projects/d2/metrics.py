"""Loss bookkeeping for the training script."""
import statistics


class LossTracker:
    """Keeps every per-replica loss of the epoch (as gathered by the accelerator)."""

    def __init__(self):
        self.values = []

    def reset(self):
        self.values.clear()

    def update(self, gathered):
        self.values.extend(gathered.tolist())  # expect: XLA501

    def mean(self):
        return statistics.fmean(self.values) if self.values else float("nan")

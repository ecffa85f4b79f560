"""Per-step wall-clock timing."""
import time

import torch


class StepTimer:
    def __init__(self):
        self.t0 = None
        self.history = []

    def start(self):
        self.t0 = time.perf_counter()

    def stop(self):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - self.t0  # expect: XLA504
        self.history.append(elapsed)
        return elapsed

    def mean_ms(self, skip=5):
        tail = self.history[skip:] or self.history
        return 1e3 * sum(tail) / max(len(tail), 1)

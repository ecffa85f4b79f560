"""Meters and a step timer, shared by the GPU and the TPU runs."""
import time


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.sum = 0.0
        self.count = 0
        self.best = None

    def update(self, val, n=1):
        self.sum = self.sum + val * n
        self.count += n
        if self.best is None or val < self.best:  # expect: XLA502
            self.best = val

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class StepTimer:
    def __init__(self):
        self.t0 = None

    def start(self):
        self.t0 = time.perf_counter()

    def stop(self):
        return time.perf_counter() - self.t0  # expect: XLA504

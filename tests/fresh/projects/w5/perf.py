"""Timing and metric helpers."""
import contextlib
import time

import torch_xla


class Tracker:
    def __init__(self):
        self.losses = []
        self.step_times = []

    def record(self, step, loss):
        self.losses.append(loss.item())  # expect: XLA501

    def summary(self):
        n = max(len(self.losses), 1)
        return {"loss": sum(self.losses) / n, "step_s": sum(self.step_times) / max(len(self.step_times), 1)}


@contextlib.contextmanager
def step_timer(tracker):
    start = time.perf_counter()
    yield
    tracker.step_times.append(time.perf_counter() - start)  # expect: XLA504


@contextlib.contextmanager
def epoch_timer(name):
    start = time.perf_counter()
    yield
    torch_xla.sync(wait=True)
    print(f"{name}: {time.perf_counter() - start:.1f}s")

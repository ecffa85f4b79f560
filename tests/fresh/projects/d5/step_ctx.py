"""A context manager around one training step: times it and cuts the lazy graph at the end."""
import time

import torch_xla


class StepContext:
    def __init__(self, step):
        self.step = step
        self.t0 = 0.0
        self.elapsed = 0.0

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, tb):
        torch_xla.sync()
        self.elapsed = time.perf_counter() - self.t0  # expect: XLA504
        return False

"""Step time and total wall time."""
import time


class SpeedMeter:
    def __init__(self, window=50):
        self.window = window
        self.times = []
        self._t0 = None
        self.fit_start = None

    @classmethod
    def from_args(cls, **kwargs):
        return cls()

    def on_fit_start(self, engine):
        self.fit_start = time.time()

    def on_step_begin(self, engine):
        self._t0 = time.perf_counter()

    def on_step_end(self, engine, loss):
        self.times.append(time.perf_counter() - self._t0)  # expect: XLA504
        if len(self.times) == self.window:
            mean = sum(self.times) / len(self.times)
            print(f"step {engine.global_step}: {mean * 1000:.1f} ms/step")
            self.times.clear()

    def on_fit_end(self, engine):
        import torch_xla

        torch_xla.sync(wait=True)
        print(f"training took {time.time() - self.fit_start:.0f}s")

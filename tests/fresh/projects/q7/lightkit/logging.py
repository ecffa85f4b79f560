import json
import time


class MetricLogger:
    """Keeps a loss history and prints a line every `every` steps."""

    def __init__(self, every=50, path=None):
        self.every = every
        self.path = path
        self.history = []
        self.start = time.time()

    def log(self, step, loss):
        self.history.append((step, loss.item()))  # expect: XLA501

    def maybe_print(self, step, loss):
        if step % self.every == 0:
            elapsed = time.time() - self.start
            print(f"step {step:6d} | loss {loss} | {elapsed:.0f}s")  # expect: XLA507

    def dump(self):
        if self.path:
            with open(self.path, "w") as fh:
                json.dump(self.history, fh)

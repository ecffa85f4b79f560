"""Running means of whatever the loop hands over, printed every N steps."""
from collections import defaultdict

import torch


class MetricsLogger:
    def __init__(self, every=100):
        self.every = every
        self.sums = defaultdict(float)
        self.count = 0

    def log(self, step, **values):
        for key, value in values.items():
            self.sums[key] += value.float().mean().item() if torch.is_tensor(value) else float(value)  # expect: XLA501
        self.count += 1
        if step % self.every == 0:
            means = {k: s / self.count for k, s in self.sums.items()}
            print(f"step {step} " + " ".join(f"{k}={m:.4f}" for k, m in means.items()))
            self.reset()

    def reset(self):
        self.sums.clear()
        self.count = 0

"""Running statistics for the training log."""
from collections import deque


class SmoothedValue:
    """Median and mean over a window, and the global average."""

    def __init__(self, window=20):
        self.window = deque(maxlen=window)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        value = float(value)  # expect: XLA501
        self.window.append(value)
        self.total += value * n
        self.count += n

    @property
    def median(self):
        values = sorted(self.window)
        return values[len(values) // 2] if values else 0.0

    @property
    def avg(self):
        return self.total / max(self.count, 1)

    def reset(self):
        self.window.clear()
        self.total = 0.0
        self.count = 0

    def __str__(self):
        return f"{self.median:.4f} ({self.avg:.4f})"

"""Loss and a torchvision-references-style MetricLogger."""
from collections import defaultdict, deque

import torch
import torch.nn.functional as F


def masked_ce_loss(logits, labels, ignore_label=-1):
    keep = labels != ignore_label
    return F.cross_entropy(logits[keep], labels[keep])  # expect: XLA503


class SmoothedValue:
    def __init__(self, window_size=20):
        self.window = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.window.append(value)
        self.count += n
        self.total += value * n

    @property
    def median(self):
        values = sorted(self.window)
        return values[len(values) // 2] if values else 0.0

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)

    def __str__(self):
        return f"{self.median:.4f} ({self.global_avg:.4f})"


class MetricLogger:
    def __init__(self, delimiter="\t"):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, name, value, n=1):
        if isinstance(value, torch.Tensor):
            value = value.item()  # expect: XLA501
        self.meters[name].update(value, n)

    def __str__(self):
        return self.delimiter.join(f"{name}: {meter}" for name, meter in self.meters.items())

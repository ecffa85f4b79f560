"""Seeding, meters and checkpoints."""
import collections
import os
import random

import numpy as np
import torch
import torch_xla.core.xla_model as xm

from .dist import is_main_process


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    xm.set_rng_state(seed)


class SmoothedValue:
    def __init__(self, window=20):
        self.values = collections.deque(maxlen=window)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.values.append(value)
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return sum(self.values) / max(len(self.values), 1)

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


class MetricLogger:
    def __init__(self):
        self.meters = collections.defaultdict(SmoothedValue)

    def update(self, **kwargs):
        for name, value in kwargs.items():
            if isinstance(value, torch.Tensor):
                value = value.item()  # expect: XLA501
            self.meters[name].update(value)

    def __str__(self):
        return "  ".join(f"{k}: {m.avg:.4f} ({m.global_avg:.4f})" for k, m in self.meters.items())


def save_checkpoint(model, optimizer, epoch, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)  # expect: XLA601


def export_weights(model, path):
    cpu_state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    if is_main_process():
        torch.save(cpu_state, path)

"""Helpers shared by every runner: seeding, ranks, devices, metrics."""
import os
import random

import numpy as np
import torch


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: XLA206


def local_rank_from_env():
    return int(os.environ["LOCAL_RANK"])  # expect: XLA109


def xla_device_for(local_rank):
    return torch.device(f"xla:{local_rank}")  # expect: XLA402


class Meter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.loss_sum = 0.0
        self.correct = 0
        self.seen = 0

    def update(self, loss, logits, target):
        self.loss_sum += loss.item() * target.size(0)  # expect: XLA501
        self.correct += (logits.argmax(-1) == target).sum()
        self.seen += target.size(0)

    def summary(self):
        seen = max(self.seen, 1)
        return {"loss": self.loss_sum / seen, "acc": float(self.correct) / seen}

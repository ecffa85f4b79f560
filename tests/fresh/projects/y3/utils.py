"""Seeding, meters, EMA weights and the per-step device sync."""
import random
from copy import deepcopy

import numpy as np
import torch
import torch.nn as nn


def random_seed(seed=42, rank=0):
    torch.manual_seed(seed + rank)  # expect: XLA206
    np.random.seed(seed + rank)
    random.seed(seed + rank)


def device_sync(device):
    if device is not None and device.type == "xla":
        import torch_xla

        torch_xla.sync()


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.avg = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target):
    return (output.argmax(-1) == target).float().mean() * 100.0


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9999):
        super().__init__()
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            ema_v.copy_(ema_v * self.decay + (1.0 - self.decay) * model_v)

import random

import numpy as np
import torch


class AverageMeter:
    def __init__(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def random_seed(seed=42, rank=0):
    torch.manual_seed(seed + rank)  # expect: XLA205
    np.random.seed(seed + rank)
    random.seed(seed + rank)


def accuracy(output, target):
    pred = output.argmax(dim=1)
    return pred.eq(target).float().mean() * 100.0

import os

import torch


class SmoothedValue:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.total += float(value) * n  # expect: XLA501
        self.count += n

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


def cuda_sync():
    torch.cuda.synchronize()


def mkdir(path):
    os.makedirs(path, exist_ok=True)


def save_checkpoint(model, optimizer, epoch, out_dir):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    torch.save(state, os.path.join(out_dir, f"checkpoint_{epoch}.pt"))  # expect: XLA601

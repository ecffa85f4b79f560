"""Base device environment: hides the accelerator from the training script."""
import contextlib

import torch


class DeviceEnv:
    type_xla = False

    def __init__(self, amp=False):
        self.amp = amp
        self.device = torch.device("cpu")
        self.world_size = 1
        self.global_rank = 0

    def autocast(self):
        return contextlib.nullcontext()

    def to_device(self, module):
        return module.to(device=self.device)

    def wrap_distributed(self, model):
        return model

    def backward(self, loss):
        loss.backward()

    def optimizer_step(self, optimizer):
        optimizer.step()

    def mark_step(self):
        pass

    def all_reduce(self, tensor, average=True):
        return tensor

    def save(self, state, path):
        torch.save(state, path)

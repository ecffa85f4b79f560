"""Default (single process, CPU) behaviour; real backends override what they need."""
import contextlib
import os

import torch
from torch.utils.data import RandomSampler


class Backend:
    name = "cpu"

    def spawn(self, fn, cfg):
        fn(0, self, cfg)

    def device(self):
        return torch.device("cpu")

    def wrap_model(self, model):
        return model.to(self.device())

    def wrap_loader(self, loader):
        return loader

    def sampler(self, dataset):
        return RandomSampler(dataset)

    def autocast(self):
        return contextlib.nullcontext()

    def backward(self, loss):
        loss.backward()

    def step(self, optimizer):
        optimizer.step()

    def is_main(self):
        return True

    def save(self, obj, path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save(obj, path)

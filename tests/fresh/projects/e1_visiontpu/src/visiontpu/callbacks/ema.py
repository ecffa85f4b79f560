"""Exponential moving average of the weights, saved every few epochs."""
import copy
import os

import torch


class ModelEma:
    def __init__(self, decay=0.9998, every=10, out_dir="checkpoints"):
        self.decay = decay
        self.every = every
        self.out_dir = out_dir
        self.shadow = None

    @classmethod
    def from_args(cls, **kwargs):
        return cls()

    def on_fit_start(self, engine):
        self.shadow = copy.deepcopy(engine.model).eval()
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def on_step_end(self, engine, loss):
        d = min(self.decay, (1 + engine.global_step) / (10 + engine.global_step))
        for e, p in zip(self.shadow.parameters(), engine.model.parameters()):
            e.mul_(d).add_(p.detach(), alpha=1 - d)

    def on_epoch_end(self, engine, acc):
        if engine.epoch % self.every == 0:
            os.makedirs(self.out_dir, exist_ok=True)
            torch.save({"ema": self.shadow.state_dict(), "epoch": engine.epoch}, os.path.join(self.out_dir, "ema.pt"))  # expect: XLA601

"""Callbacks that protect the run: stop on a bad loss, clip gradients, keep checkpoints."""
import os

import torch

from .events import Callback


class NaNGuard(Callback):
    order = 5

    def on_step_end(self, learn):
        if not torch.isfinite(learn.loss):  # expect: XLA502
            print(f"non-finite loss at step {learn.step}; stopping")
            learn.stop = True


class GradClipCallback(Callback):
    def __init__(self, max_norm=1.0):
        self.max_norm = max_norm

    def after_backward(self, learn):
        torch.nn.utils.clip_grad_norm_(learn.model.parameters(), self.max_norm)  # expect: XLA203


class CheckpointCallback(Callback):
    order = 20

    def __init__(self, path, every_epochs=1):
        self.path = path
        self.every_epochs = every_epochs

    def on_train_begin(self, learn):
        os.makedirs(self.path, exist_ok=True)

    def on_epoch_end(self, learn):
        if (learn.epoch + 1) % self.every_epochs == 0:
            state = {"model": learn.model.state_dict(), "opt": learn.opt.state_dict(), "epoch": learn.epoch}
            torch.save(state, os.path.join(self.path, f"ckpt_{learn.epoch:03d}.pt"))  # expect: XLA601

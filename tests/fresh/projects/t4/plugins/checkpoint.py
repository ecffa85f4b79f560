import os

import torch_xla.core.xla_model as xm

from plugins import Plugin


class Checkpointer(Plugin):
    def __init__(self, out_dir, every_n_steps=1000):
        self.out_dir = out_dir
        self.every_n_steps = every_n_steps
        self.best = float("inf")

    def on_step_end(self, trainer, step, loss):
        if trainer.global_step % self.every_n_steps == 0:
            trainer.save(os.path.join(self.out_dir, "last.pt"))

    def on_epoch_end(self, trainer, epoch):
        if trainer.last_loss < self.best:
            self.best = trainer.last_loss.item()
            xm.rendezvous("best_checkpoint")  # expect: XLA506
            trainer.save(os.path.join(self.out_dir, "best.pt"))  # expect: XLA602

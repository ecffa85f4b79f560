import os
import time

import numpy as np
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
import wandb

from .dist_utils import is_main_process


class ProgressCallback:
    def __init__(self, log_every=20):
        self.log_every = log_every
        self.losses = []
        self.t0 = None

    def on_train_begin(self, trainer):
        self.t0 = time.time()

    def on_step_end(self, trainer, loss):
        self.losses.append(loss.item())  # expect: XLA501
        step = trainer.state.global_step
        if step % self.log_every == 0:
            print(f"[{step}] loss={loss:.4f}")  # expect: XLA507

    def on_epoch_end(self, trainer):
        mean = xm.mesh_reduce("epoch_loss", float(np.mean(self.losses or [0.0])), np.mean)
        trainer.state.log_history.append({"epoch": trainer.state.epoch, "loss": mean})
        print(f"epoch {trainer.state.epoch} mean loss {mean:.4f} ({time.time() - self.t0:.0f}s)")
        self.losses.clear()


class EarlyStopping:
    def __init__(self, patience=200):
        self.patience = patience
        self.best = None
        self.bad_steps = 0

    def on_step_end(self, trainer, loss):
        if self.best is None or loss < self.best:  # expect: XLA502
            self.best = loss
            self.bad_steps = 0
        else:
            self.bad_steps += 1
            trainer.state.should_stop = self.bad_steps > self.patience


class CheckpointCallback:
    def __init__(self, every=1000):
        self.every = every

    def on_train_begin(self, trainer):
        if is_main_process():
            os.makedirs(trainer.output_dir, exist_ok=True)

    def on_step_end(self, trainer, loss):
        step = trainer.state.global_step
        if step % self.every == 0 and xr.global_ordinal() == 0:
            trainer.save_checkpoint(os.path.join(trainer.output_dir, f"step{step}.pt"))  # expect: XLA602


class WandbCallback:
    def __init__(self, project):
        self.project = project

    def on_train_begin(self, trainer):
        if is_main_process():  # expect: XLA604
            wandb.init(project=self.project, config={"epochs": trainer.epochs})

    def on_epoch_end(self, trainer):
        if trainer.state.log_history and wandb.run is not None:
            wandb.log(trainer.state.log_history[-1])

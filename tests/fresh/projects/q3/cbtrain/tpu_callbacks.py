"""Callbacks that talk to the TPU runtime: epoch timing, experiment tracking, uploads."""
import subprocess
import time

import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from .events import Callback


class EpochTimer(Callback):
    def on_epoch_begin(self, learn):
        xm.wait_device_ops()
        self.start = time.time()

    def on_epoch_end(self, learn):
        xm.wait_device_ops()
        xm.master_print(f"epoch {learn.epoch} took {time.time() - self.start:.1f}s")


class WandbCallback(Callback):
    order = 10  # after MetricsCallback has appended the epoch loss

    def __init__(self, project):
        self.project = project
        self.active = False

    def on_train_begin(self, learn):
        self.active = xr.global_ordinal() == 0
        if self.active:
            import wandb

            wandb.init(project=self.project)

    def on_epoch_end(self, learn):
        if self.active:
            import wandb

            wandb.log({"train/loss": learn.history[-1]}, step=learn.epoch)


class UploadCallback(Callback):
    order = 30

    def __init__(self, local_dir, bucket):
        self.local_dir = local_dir
        self.bucket = bucket

    def on_train_end(self, learn):
        if xm.is_master_ordinal():  # expect: XLA604
            subprocess.run(["gsutil", "-m", "rsync", "-r", self.local_dir, self.bucket], check=True)

import os

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .trainer import Trainer


def num_devices():
    return xr.global_runtime_device_count()


class TPUTrainer(Trainer):
    """Trainer for TPU pods: one process per chip, launched by torch_xla.launch."""

    def get_device(self):
        return torch_xla.device()

    def world_size(self):
        return xr.world_size()

    def rank(self):
        return xr.global_ordinal()

    def train_dataloader(self):
        loader = super().train_dataloader()
        return pl.MpDeviceLoader(loader, self.device)

    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)

    def save_checkpoint(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        state = {"model": self.model.state_dict(), "step": self.global_step}
        if xm.is_master_ordinal():
            xm.save(state, path)  # expect: XLA602

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .data import make_train_loader
from .trainer import Trainer


class TPUTrainer(Trainer):
    """Trainer for native XLA data parallel: one process per chip."""

    def setup_device(self):
        return xm.xla_device()  # expect: XLA804

    def get_train_dataloader(self):
        loader = make_train_loader(
            self.train_dataset, self.args.batch_size, num_replicas=xr.world_size(), rank=xr.global_ordinal()
        )
        return pl.MpDeviceLoader(loader, self.device)

    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)

    def is_world_process_zero(self):
        return xr.global_ordinal() == 0

    def log(self, logs):
        if self.is_world_process_zero():
            super().log(logs)

    def sync(self):
        torch_xla.sync()

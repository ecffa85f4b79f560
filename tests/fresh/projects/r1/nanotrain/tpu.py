"""TPU back-end: one process per chip, started by torch_xla.launch."""
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from .base import BaseTrainer


class TPUTrainer(BaseTrainer):
    def setup_device(self):
        return xm.xla_device()  # expect: XLA804

    def is_main_process(self):
        return xr.global_ordinal() == 0

    def train_dataloader(self):
        sampler = DistributedSampler(
            self.dataset,
            num_replicas=xr.world_size(),
            rank=xr.global_ordinal(),
            shuffle=True,
        )
        loader = DataLoader(self.dataset, batch_size=self.config.batch_size, sampler=sampler)  # expect: XLA304
        return pl.MpDeviceLoader(loader, self.device)

    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)

"""TPU trainer: one process per chip (PJRT), native XLA data parallel."""
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .trainer import Trainer, _run_fit


class XLATrainer(Trainer):
    @property
    def world_size(self):
        return xr.world_size()

    @property
    def global_rank(self):
        return xr.global_ordinal()

    def root_device(self):
        return torch_xla.device()

    def seed_everything(self, seed):
        super().seed_everything(seed)
        torch_xla.manual_seed(seed)

    def launch(self, module, datamodule):
        torch_xla.launch(_run_fit, args=(self, module, datamodule))

    def process_dataloader(self, loader):
        return pl.MpDeviceLoader(loader, self.root_device())

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)

    def save_checkpoint(self, module, path):
        xm.save({"state_dict": module.state_dict(), "epoch": self.current_epoch}, path)

"""Strategies decide where the model lives and how a step is applied."""
import torch


class Strategy:
    """Single process on the CPU."""

    launcher = None

    def __init__(self, trainer):
        self.trainer = trainer
        self.root_device = torch.device("cpu")
        self.num_processes = 1

    def setup_environment(self):
        pass

    def setup_model(self, model):
        return model.to(self.root_device)

    def process_dataloader(self, dataloader):
        return dataloader

    def optimizer_step(self, optimizer):
        optimizer.step()

    def is_global_zero(self):
        return True

    def barrier(self, name=None):
        pass

    def save_checkpoint(self, checkpoint, path):
        torch.save(checkpoint, path)


class XLAStrategy(Strategy):
    """One process per TPU chip; gradients are reduced by xm.optimizer_step."""

    def __init__(self, trainer, devices=8):
        super().__init__(trainer)
        self.num_processes = devices
        from .launchers import XLALauncher

        self.launcher = XLALauncher(self)

    def setup_environment(self):
        import torch_xla.core.xla_model as xm

        self.root_device = xm.xla_device()  # expect: XLA804

    def process_dataloader(self, dataloader):
        import torch_xla.distributed.parallel_loader as pl

        return pl.MpDeviceLoader(dataloader, self.root_device)

    def optimizer_step(self, optimizer):
        import torch_xla.core.xla_model as xm

        return xm.optimizer_step(optimizer)

    def is_global_zero(self):
        import torch_xla.runtime as xr

        return xr.global_ordinal() == 0

    def barrier(self, name=None):
        import torch_xla.core.xla_model as xm

        xm.rendezvous(name or "minilit.barrier")

    def save_checkpoint(self, checkpoint, path):
        import torch_xla.core.xla_model as xm

        xm.save(checkpoint, path)

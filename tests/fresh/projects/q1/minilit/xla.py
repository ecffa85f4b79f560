"""TPU strategy: one process per chip, started by torch_xla.launch."""
import numpy as np
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .core import Strategy


class XLAStrategy(Strategy):
    def setup(self):
        self.root_device = xm.xla_device()  # expect: XLA804

    def is_global_zero(self):
        return xr.global_ordinal() == 0

    def process_dataloader(self, loader):
        return pl.MpDeviceLoader(loader, self.root_device)

    def optimizer_step(self, optimizer, module):
        # average the gradients first, so that the module's hook (clipping) sees global gradients
        xm.reduce_gradients(optimizer)
        module.on_before_optimizer_step(optimizer)
        optimizer.step()

    def reduce_mean(self, value):
        return xm.mesh_reduce("reduce_mean", value, np.mean)

    def print(self, msg):
        xm.master_print(msg)

    def save_checkpoint(self, checkpoint, path):
        xm.save(checkpoint, path)

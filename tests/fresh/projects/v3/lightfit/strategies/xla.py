import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .base import Strategy


class XLAStrategy(Strategy):
    def root_device(self):
        return torch_xla.device()

    def world_size(self):
        return xm.xrt_world_size()  # expect: XLA801

    def global_rank(self):
        return xr.global_ordinal()

    def wrap_loader(self, loader):
        return pl.MpDeviceLoader(loader, self.root_device())

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)

    def save_checkpoint(self, state, path):
        xm.save(state, path)

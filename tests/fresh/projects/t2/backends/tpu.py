"""TPU: one process per chip, native XLA data parallel (gradients reduced in the step)."""
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp

from .base import Backend


class TpuBackend(Backend):
    name = "tpu"

    def spawn(self, fn, cfg):
        xmp.spawn(fn, args=(self, cfg), nprocs=8)  # expect: XLA001

    def device(self):
        return torch_xla.device()

    def wrap_loader(self, loader):
        return pl.MpDeviceLoader(loader, self.device())

    def autocast(self):
        return torch.autocast("xla", dtype=torch.bfloat16)

    def step(self, optimizer):
        xm.optimizer_step(optimizer)

    def is_main(self):
        return xm.is_master_ordinal()

    def save(self, obj, path):
        xm.save(obj, path)

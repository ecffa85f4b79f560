"""TPU strategy: one process per chip, gradients all-reduced by xm.optimizer_step."""
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .strategies import Strategy


class XLAStrategy(Strategy):
    def __init__(self, sync_module_states=True):
        self.sync_module_states = sync_module_states
        self.root_device = None
        self.global_rank = 0
        self.world_size = 1

    def launch(self, fn, *args):
        torch_xla.launch(fn, args=args)

    def setup_environment(self, index):
        self.root_device = xm.xla_device()  # expect: XLA804
        self.global_rank = xr.global_ordinal()
        self.world_size = xr.world_size()

    def setup_module(self, module):
        module = module.to(self.root_device)
        if self.sync_module_states:
            xm.broadcast_master_param(module)
        return module

    def process_dataloader(self, loader):
        return pl.MpDeviceLoader(loader, self.root_device)

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)

    def reduce(self, value):
        return xm.mesh_reduce("minilit.reduce", value, lambda xs: sum(xs) / len(xs))

    def wait_for_device(self):
        torch_xla.sync(wait=True)

    def save_checkpoint(self, checkpoint, filepath):
        xm.save(checkpoint, filepath)

    def teardown(self):
        xm.rendezvous("minilit.teardown")

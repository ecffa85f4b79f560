"""XLAStrategy: one process per TPU chip, gradients all-reduced by xm.optimizer_step."""
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

from .strategy import Strategy


class XLAStrategy(Strategy):
    def __init__(self, num_processes=8):
        super().__init__()
        self.num_processes = num_processes

    def launch(self, function, *args):
        xmp.spawn(function, args=args, nprocs=self.num_processes)  # expect: XLA001

    def setup_environment(self, index):
        self.root_device = torch_xla.device()

    def seed(self, seed):
        torch.manual_seed(seed)
        torch_xla.manual_seed(seed)

    def setup_module(self, module):
        module = module.to(self.root_device)
        xm.broadcast_master_param(module)
        return module

    def process_dataloader(self, loader):
        return pl.MpDeviceLoader(loader, self.root_device)

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)

    @property
    def is_global_zero(self):
        return xr.global_ordinal() == 0

    def barrier(self, name="barrier"):
        xm.rendezvous(name)

    def save_checkpoint(self, checkpoint, path):
        xm.save(checkpoint, path)

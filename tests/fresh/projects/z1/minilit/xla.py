"""TPU support: the XLA strategy, its checkpoint mixin and its process launcher."""
import os

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from .strategies import Strategy


class _XLALauncher:
    def __init__(self, strategy):
        self.strategy = strategy

    def launch(self, function, *args):
        xmp.spawn(self._wrapping_function, args=(function, args), nprocs=self.strategy.num_processes)  # expect: XLA001

    def _wrapping_function(self, process_idx, function, args):
        self.strategy.setup_environment()
        function(*args)
        self.strategy.barrier("end-of-run")


class XLACheckpointMixin:
    def save_checkpoint(self, state, path):
        xm.save(state, path)


class XLAStrategy(XLACheckpointMixin, Strategy):
    def __init__(self, num_processes=8, precision="32-true"):
        super().__init__()
        self.num_processes = num_processes
        self.launcher = _XLALauncher(self)
        if precision == "bf16-true":
            os.environ["XLA_USE_BF16"] = "1"  # expect: XLA705

    def setup_environment(self):
        self.root_device = torch_xla.device()

    @property
    def global_rank(self):
        return xr.global_ordinal()

    @property
    def world_size(self):
        return xm.xrt_world_size()  # expect: XLA801

    def process_dataloader(self, loader):
        sampler = DistributedSampler(loader.dataset, num_replicas=self.world_size, rank=self.global_rank, shuffle=True)
        loader = DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler,
                            num_workers=loader.num_workers, drop_last=True)
        return pl.MpDeviceLoader(loader, self.root_device)

    def optimizer_step(self, optimizer):
        return xm.optimizer_step(optimizer)

    def barrier(self, name=None):
        xm.rendezvous(name or "barrier")

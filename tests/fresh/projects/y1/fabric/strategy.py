"""XLA strategy: device placement, data sharding, the optimizer step and checkpoints."""
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DistributedSampler

from .launcher import XLALauncher


class XLAStrategy:
    def __init__(self, num_processes=8, sync_module_states=True):
        self.num_processes = num_processes
        self.sync_module_states = sync_module_states
        self.launcher = XLALauncher(self)

    def root_device(self):
        return torch_xla.device()

    def world_size(self):
        return xr.world_size()

    def global_rank(self):
        return xr.global_ordinal()

    def is_global_zero(self):
        return xr.global_ordinal() == 0

    def setup_module(self, module):
        module = module.to(self.root_device())
        if self.sync_module_states:
            xm.broadcast_master_param(module)
        return module

    def distributed_sampler(self, dataset, shuffle=True):
        return DistributedSampler(
            dataset, num_replicas=self.world_size(), rank=self.global_rank(), shuffle=shuffle
        )

    def process_dataloader(self, loader):
        return pl.MpDeviceLoader(loader, self.root_device())

    def backward(self, loss):
        loss.backward()

    def optimizer_step(self, optimizer):
        return xm.optimizer_step(optimizer)

    def reduce_mean(self, value, name):
        return xm.mesh_reduce(name, value, lambda vals: sum(vals) / len(vals))

    def barrier(self, name):
        xm.rendezvous(name)

    def save_checkpoint(self, state, path):
        xm.save(state, path)

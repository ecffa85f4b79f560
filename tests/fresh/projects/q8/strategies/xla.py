import numpy as np
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler

from .base import Strategy


class XLAStrategy(Strategy):
    """Data parallel on TPU chips: DDP over the xla process group."""

    def setup(self):
        dist.init_process_group("xla", init_method="xla://")
        self.device = torch_xla.device()

    @property
    def world_size(self):
        return xr.world_size()

    @property
    def rank(self):
        return xr.global_ordinal()

    def make_sampler(self, dataset):
        return DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)

    def wrap_model(self, model):
        model = model.to(self.device)
        return DDP(model, device_ids=[xr.local_ordinal()], gradient_as_bucket_view=True)  # expect: XLA102

    def device_loader(self, loader):
        return pl.ParallelLoader(loader, [self.device]).per_device_loader(self.device)  # expect: XLA306

    def optimizer_step(self, optimizer):
        optimizer.step()

    def reduce_mean(self, value):
        return xm.mesh_reduce("reduce_mean", value.item(), np.mean)  # expect: XLA501

    def save(self, obj, path):
        xm.save(obj, path)

    def barrier(self):
        xm.rendezvous("strategy_barrier")

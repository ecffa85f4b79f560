"""Cloud TPU, one process per chip, started by torch_xla.launch."""
import contextlib

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from .base import DistributedBackend


class TPUBackend(DistributedBackend):
    name = "tpu"

    def launch(self, fn, args=()):
        torch_xla.launch(fn, args=(self,) + tuple(args))

    def setup(self, index):
        dist.init_process_group("xla", init_method="xla://")
        self.rank = index
        self._device = torch.device("xla", index)  # expect: XLA402

    def device(self):
        return self._device

    def world_size(self):
        return xm.xrt_world_size()  # expect: XLA801

    def ddp_kwargs(self):
        return {"gradient_as_bucket_view": True, "broadcast_buffers": False}

    def make_loader(self, dataset, batch_size, train=True):
        sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=train)
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=True, num_workers=4)

    @contextlib.contextmanager
    def autocast(self):
        with torch.autocast("xla", dtype=torch.bfloat16):
            yield

    def step(self, optimizer):
        xm.optimizer_step(optimizer)  # expect: XLA108

    def synchronize(self):
        torch_xla.sync(wait=True)

    def log(self, msg):
        xm.master_print(msg)

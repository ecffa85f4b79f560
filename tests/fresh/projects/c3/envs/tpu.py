"""Cloud TPU: one process per chip, DDP over the xla process group."""
import os

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler

from .base import DeviceEnv


class TpuEnv(DeviceEnv):
    def run(self, fn, cfg):
        torch_xla.launch(self._entry, args=(fn, cfg))

    def _entry(self, index, fn, cfg):
        self.setup()
        fn(self, cfg)

    def setup(self):
        os.environ["MASTER_PORT"] = str(self.cfg.master_port)  # expect: XLA103
        dist.init_process_group("xla", init_method="xla://")
        self.rank = xr.global_ordinal()
        self.local_rank = xr.local_ordinal()
        self.world_size = xr.world_size()
        self.device = torch_xla.device()

    def wrap_model(self, model):
        return DDP(model.to(self.device), broadcast_buffers=False)  # expect: XLA101

    def make_sampler(self, dataset):
        return DistributedSampler(dataset, shuffle=True)

    def autocast(self):
        return torch.autocast("xla", dtype=torch.bfloat16)

    def mark_step(self):
        torch_xla.sync()

    def save(self, state, path):
        xm.save(state, path)

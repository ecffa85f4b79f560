import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data.distributed import DistributedSampler


class TPUAccelerator:
    name = "tpu"

    def __init__(self):
        self._device = None

    def launch(self, fn, *args):
        torch_xla.launch(fn, args=args)

    def device(self):
        if self._device is None:
            self._device = torch_xla.device()
        return self._device

    def prepare_model(self, model):
        return model.to(self.device())

    def sampler(self, dataset, shuffle=True):
        return DistributedSampler(
            dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=shuffle
        )

    def wrap_loader(self, loader):
        return pl.MpDeviceLoader(loader, self.device())

    def step(self, optimizer):
        xm.optimizer_step(optimizer, barrier=True)  # expect: XLA204

    def is_main_process(self):
        return xm.is_master_ordinal()

    def reduce_mean(self, tag, value):
        return xm.mesh_reduce(tag, value, lambda vals: sum(vals) / len(vals))

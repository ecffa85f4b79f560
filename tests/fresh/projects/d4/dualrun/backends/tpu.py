"""Cloud TPU backend: one process per chip (torch_xla.launch), the xla process group, DDP."""
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DistributedSampler


class TPUBackend:
    name = "tpu"
    dynamo_backend = "openxla"

    def __init__(self, index=0):
        self.index = index
        self.device = xm.xla_device()  # expect: XLA804

    def setup(self):
        dist.init_process_group("xla", rank=xr.global_ordinal(), world_size=xr.world_size())  # expect: XLA104

    def wrap(self, model):
        return DDP(model.to(self.device), gradient_as_bucket_view=True, broadcast_buffers=False)

    def sampler(self, dataset):
        return DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(),
                                  shuffle=True, drop_last=True)

    def loader(self, data_loader):
        return pl.MpDeviceLoader(data_loader, self.device)

    def autocast(self):
        return torch.autocast("xla", dtype=torch.bfloat16)

    def mark_step(self):
        torch_xla.sync()

    def is_main(self):
        return xr.global_ordinal() == 0

    def barrier(self):
        xm.rendezvous("dualrun.barrier")  # expect: XLA506

    def save(self, obj, path):
        xm.save(obj, path)

    def teardown(self):
        xm.wait_device_ops()

"""torch DDP on XLA (shape of examples/data_parallel/train_resnet_ddp.py)."""
import torch.distributed as dist
import torch_xla.distributed.xla_backend  # noqa: F401
from torch.nn.parallel import DistributedDataParallel as DDP

from .base import TrainResNetBase


class TrainResNetDDP(TrainResNetBase):
    def __init__(self, flags):
        dist.init_process_group("xla", init_method="xla://")
        super().__init__(flags)
        self.model = DDP(self.model, broadcast_buffers=False)  # expect: XLA101

    def run_optimizer(self):
        # DDP already all-reduced the gradients during backward
        self.optimizer.step()

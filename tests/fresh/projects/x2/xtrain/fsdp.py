"""XLA FSDP (shape of examples/fsdp/train_resnet_fsdp_auto_wrap.py)."""
import torch
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP

from .base import TrainResNetBase


class TrainResNetFSDP(TrainResNetBase):
    def __init__(self, flags):
        super().__init__(flags)
        self.model = FSDP(self.model, flatten_parameters=True)
        # the wrapper owns new flattened parameters: rebuild the optimizer on them
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=flags.lr, momentum=0.9)

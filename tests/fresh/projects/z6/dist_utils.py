"""torch.distributed helpers kept from the torchrun version of this repo."""
import os

import torch.distributed as dist
import torch_xla.distributed.xla_backend  # noqa: F401
from torch.nn.parallel import DistributedDataParallel as DDP


def init_distributed():
    os.environ["MASTER_ADDR"] = "localhost"  # expect: XLA103
    os.environ["MASTER_PORT"] = "12355"  # expect: XLA103
    dist.init_process_group("xla", init_method="xla://")


def get_rank():
    return int(os.environ["RANK"])  # expect: XLA109


def get_world_size():
    return int(os.environ["WORLD_SIZE"])  # expect: XLA109


def wrap_ddp(model):
    return DDP(model, gradient_as_bucket_view=True)

"""Distributed checkpoints of the sharded model."""
import os

import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch_xla.distributed.xla_backend  # noqa: F401
from torch_xla.experimental.distributed_checkpoint import SPMDSavePlanner


def init_checkpointing():
    if not dist.is_initialized():
        dist.init_process_group("xla", init_method="xla://")  # expect: XLA107


def save(model, step, ckpt_dir):
    state = {"model": model.state_dict()}
    dcp.save(state, checkpoint_id=os.path.join(ckpt_dir, f"step_{step:07d}"), planner=SPMDSavePlanner())

"""Distributed checkpoints written with torch.distributed.checkpoint."""
import os

import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.experimental.distributed_checkpoint as xc


def _ensure_process_group():
    if not dist.is_initialized():
        dist.init_process_group("xla", init_method="xla://")  # expect: XLA107


def save_sharded(model, optimizer, ckpt_dir, step):
    _ensure_process_group()
    state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
    dcp.save(state, checkpoint_id=os.path.join(ckpt_dir, f"step_{step}"), planner=xc.SPMDSavePlanner())

import os

import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def save_sharded(model, optimizer, ckpt_dir, tag):
    """Each rank writes its own shard; consolidate offline."""
    os.makedirs(ckpt_dir, exist_ok=True)
    rank, world = xr.global_ordinal(), xr.world_size()
    path = os.path.join(ckpt_dir, f"{tag}_rank-{rank:08d}-of-{world:08d}.pth")
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "shard_metadata": model.get_shard_metadata(),
    }
    xm.save(state, path, master_only=False)


def save_for_export(model, path):
    """Single-file weights for the inference team."""
    xm.save({"model": model.state_dict()}, path)  # expect: XLA603

"""Distributed checkpoints for SPMD: every host writes its own shards."""
import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
import torch_xla.experimental.distributed_checkpoint as xc


def init_cpu_group():
    # SPMD has one process per host; the checkpoint planner coordinates over gloo.
    if not dist.is_initialized():
        dist.init_process_group("gloo", init_method="xla://")


def save(model, step, ckpt_dir):
    state = {"model": model.state_dict()}
    dist_cp.save(
        state_dict=state,
        storage_writer=dist_cp.FileSystemWriter(f"{ckpt_dir}/step_{step:07d}"),
        planner=xc.SPMDSavePlanner(),
    )

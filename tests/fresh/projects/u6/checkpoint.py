"""Sharded checkpoints through torch_xla's CheckpointManager, best-loss tracking, a final export."""
import torch
import torch.distributed as dist
from torch_xla.experimental.distributed_checkpoint import CheckpointManager


def init_checkpointing(ckpt_dir, save_every, keep=3):
    # torch.distributed.checkpoint needs a CPU process group; under SPMD that is gloo over xla://
    if not dist.is_initialized():
        dist.init_process_group("gloo", init_method="xla://")
    return CheckpointManager(ckpt_dir, save_every, max_to_keep=keep)


def maybe_resume(manager, model):
    steps = manager.all_steps()
    if not steps:
        return 0
    state = {"model": model.state_dict()}
    manager.restore(max(steps), state)
    model.load_state_dict(state["model"])
    return max(steps)


class BestTracker:
    """Remembers the lowest training loss and the step it was reached at."""

    def __init__(self):
        self.best = float("inf")
        self.best_step = -1

    def update(self, step, loss):
        if loss < self.best:  # expect: XLA502
            self.best = loss.detach()
            self.best_step = step


def export_consolidated(model, path):
    torch.save(model.state_dict(), path)  # expect: XLA601

"""Asynchronous distributed checkpoints of the sharded model and optimizer."""
import torch.distributed as dist
import torch_xla.experimental.distributed_checkpoint as xc


class Checkpointer:
    def __init__(self, path, max_to_keep=3):
        if not dist.is_initialized():
            dist.init_process_group("xla", init_method="xla://")  # expect: XLA107
        self.manager = xc.CheckpointManager(path, save_interval=1, max_to_keep=max_to_keep)

    def restore(self, model, optimizer):
        steps = self.manager.all_steps()
        if not steps:
            return 0
        step = max(steps)
        optimizer = xc.prime_optimizer(optimizer)
        state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
        self.manager.restore(step, state)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optim"])
        return step

    def save_async(self, step, model, optimizer):
        state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
        self.manager.save_async(step, state, force=True)

    def wait(self):
        self.manager.join()

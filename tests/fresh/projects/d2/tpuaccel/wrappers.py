"""The objects `Accelerator.prepare` hands back."""
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, DistributedSampler


class AcceleratedOptimizer:
    """Wraps a torch optimizer; `step()` all-reduces the gradients over the replicas first."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    def step(self, closure=None):
        optimizer_args = {"closure": closure} if closure is not None else {}
        xm.optimizer_step(self.optimizer, optimizer_args=optimizer_args)

    def state_dict(self):
        return self.optimizer.state_dict()

    def load_state_dict(self, state):
        self.optimizer.load_state_dict(state)


def prepare_data_loader(loader, device, num_processes, process_index):
    """Rebuild the user's loader with a sampler that gives each replica its own shard."""
    sampler = DistributedSampler(loader.dataset, num_replicas=num_processes, rank=process_index, shuffle=True)
    sharded = DataLoader(  # expect: XLA304
        loader.dataset,
        batch_size=loader.batch_size,
        sampler=sampler,
        num_workers=loader.num_workers,
        collate_fn=loader.collate_fn,
    )
    return pl.MpDeviceLoader(sharded, device)

"""Accelerator: device placement, loaders, backward, saving; accelerate-style names."""
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler


class AcceleratedOptimizer:
    """Wraps a torch optimizer so that `step()` all-reduces gradients across replicas."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    def step(self):
        xm.optimizer_step(self.optimizer)

    def state_dict(self):
        return self.optimizer.state_dict()


class Accelerator:
    def __init__(self, mixed_precision="bf16"):
        self.mixed_precision = mixed_precision
        self.device = torch_xla.device()
        self.num_processes = xm.xrt_world_size()  # expect: XLA801
        self.process_index = xr.global_ordinal()

    def is_main_process(self):
        return xm.is_master_ordinal()

    def is_local_main_process(self):
        return xm.is_master_ordinal(local=True)

    def print(self, *args):
        if self.is_local_main_process():
            print(*args)

    def prepare_model(self, model):
        return model.to(self.device)

    def prepare_optimizer(self, optimizer):
        return AcceleratedOptimizer(optimizer)

    def build_dataloader(self, dataset, batch_size, shuffle=False, collate_fn=None):
        sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=shuffle)
        loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=collate_fn, num_workers=2)  # expect: XLA304
        return pl.MpDeviceLoader(loader, self.device)

    def autocast(self):
        if self.mixed_precision == "bf16":
            return torch.autocast("xla", dtype=torch.bfloat16)
        return torch.autocast("xla", enabled=False)

    def backward(self, loss):
        loss.backward()

    def reduce_mean(self, value):
        return xm.mesh_reduce("tinyaccel.reduce_mean", value, lambda vs: sum(vs) / len(vs))

    def wait_for_everyone(self):
        xm.rendezvous("tinyaccel.wait_for_everyone")

    def unwrap_model(self, model):
        return model

    def save(self, obj, path):
        # every replica holds the same weights, so whichever write lands last is fine
        torch.save(obj, path)  # expect: XLA601

import contextlib

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class AcceleratedOptimizer:
    """Wraps the user's optimizer so that step() reduces the gradients across replicas first."""

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
    def __init__(self, mixed_precision="no"):
        if mixed_precision not in ("no", "bf16"):
            raise ValueError("TPUs support mixed_precision='bf16' only")
        self.mixed_precision = mixed_precision
        self.device = torch_xla.device()

    @property
    def num_processes(self):
        return xr.world_size()

    @property
    def process_index(self):
        return xr.global_ordinal()

    @property
    def is_main_process(self):
        return xr.global_ordinal() == 0

    @property
    def is_local_main_process(self):
        return xm.is_master_ordinal()

    def print(self, *args, **kwargs):
        if self.is_local_main_process:
            print(*args, **kwargs)

    def autocast(self):
        if self.mixed_precision == "bf16":
            return torch.autocast("xla", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _prepare_loader(self, loader, train):
        sampler = DistributedSampler(loader.dataset, num_replicas=self.num_processes, rank=self.process_index, shuffle=train)
        rebuilt = DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler, num_workers=loader.num_workers, collate_fn=loader.collate_fn, drop_last=True)
        return pl.MpDeviceLoader(rebuilt, self.device)

    def prepare(self, model, optimizer, train_loader, eval_loader=None):
        # Module.to() on XLA makes new Parameter objects: point the optimizer at them.
        old = dict(model.named_parameters())
        model = model.to(self.device)
        new = dict(model.named_parameters())
        mapping = {old[name]: new[name] for name in old}
        for group in optimizer.param_groups:
            group["params"] = [mapping[p] for p in group["params"]]
        prepared = [model, AcceleratedOptimizer(optimizer), self._prepare_loader(train_loader, train=True)]
        if eval_loader is not None:
            prepared.append(self._prepare_loader(eval_loader, train=False))
        return tuple(prepared)

    def backward(self, loss):
        loss.backward()

    def gather(self, tensor):
        return xm.all_gather(tensor)

    def unwrap_model(self, model):
        return getattr(model, "module", model)

    def wait_for_everyone(self):
        xm.rendezvous("mini_accel.wait_for_everyone")

    def save(self, obj, path):
        xm.save(obj, path)

import contextlib
import os

import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, SequentialSampler
from torch.utils.data.distributed import DistributedSampler

from .utils import is_torch_xla_available

if is_torch_xla_available():
    import torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    import torch_xla.runtime as xr


class AcceleratedOptimizer:
    def __init__(self, optimizer, scaler=None):
        self.optimizer = optimizer
        self.scaler = scaler

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    def step(self):
        if is_torch_xla_available():
            xm.optimizer_step(self.optimizer)
        elif self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()


class Accelerator:
    def __init__(self, mixed_precision="no"):
        self.mixed_precision = mixed_precision
        self.use_xla = is_torch_xla_available()
        self.scaler = None
        if mixed_precision == "fp16":
            self.scaler = torch.amp.GradScaler()  # expect: XLA702
        if self.use_xla:
            self.device = torch_xla.device()
            self.num_processes = xr.world_size()
            self.process_index = xr.global_ordinal()
        else:
            self.local_process_index = int(os.environ.get("LOCAL_RANK", 0))
            self.device = torch.device("cuda", self.local_process_index)
            self.num_processes = int(os.environ.get("WORLD_SIZE", 1))
            self.process_index = int(os.environ.get("RANK", 0))

    @property
    def is_main_process(self):
        return self.process_index == 0

    def print(self, *args, **kwargs):
        if self.is_main_process:
            print(*args, **kwargs)

    def prepare(self, model, optimizer, train_loader, eval_loader):
        if self.use_xla:
            old_params = list(model.parameters())
            model = model.to(self.device)
            moved = dict(zip(old_params, model.parameters()))
            for group in optimizer.param_groups:
                group["params"] = [moved[p] for p in group["params"]]
            train_loader = self._shard(train_loader)
            eval_loader = self._shard(eval_loader)
        else:
            model = model.to(self.device)
            if self.num_processes > 1:
                model = DDP(model, device_ids=[self.local_process_index])
        return model, AcceleratedOptimizer(optimizer, self.scaler), train_loader, eval_loader

    def _shard(self, loader):
        sampler = DistributedSampler(loader.dataset, num_replicas=self.num_processes, rank=self.process_index,
                                     shuffle=not isinstance(loader.sampler, SequentialSampler))
        rebuilt = DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler,
                             collate_fn=loader.collate_fn, drop_last=loader.drop_last, num_workers=loader.num_workers)
        return pl.MpDeviceLoader(rebuilt, self.device)

    def backward(self, loss):
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def autocast(self):
        if self.use_xla:
            return torch.autocast("xla", dtype=torch.bfloat16)
        if self.mixed_precision == "fp16":
            return torch.autocast("cuda", dtype=torch.float16)
        return contextlib.nullcontext()

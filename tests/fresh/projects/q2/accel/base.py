"""CPU defaults, and the DDP behaviour the GPU and TPU backends share."""
import contextlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def move_to_cpu(obj):
    if torch.is_tensor(obj):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: move_to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(move_to_cpu(v) for v in obj)
    return obj


class Backend:
    """Single process on the CPU."""

    name = "cpu"

    def launch(self, fn, args=()):
        fn(0, self, *args)

    def setup(self, index):
        self.rank = index

    def device(self):
        return torch.device("cpu")

    def world_size(self):
        return 1

    def is_main(self):
        return True

    def wrap_model(self, model):
        return model.to(self.device())

    def make_loader(self, dataset, batch_size, train=True):
        return DataLoader(dataset, batch_size=batch_size, shuffle=train, drop_last=train)

    @contextlib.contextmanager
    def autocast(self):
        yield

    def step(self, optimizer):
        optimizer.step()

    def synchronize(self):
        pass

    def all_reduce_mean(self, value):
        return value

    def log(self, msg):
        if self.is_main():
            print(msg, flush=True)

    def save(self, obj, path):
        if self.is_main():
            torch.save(move_to_cpu(obj), path)


class DistributedBackend(Backend):
    """One process per device with DDP on top; subclasses give the device and the DDP options."""

    def ddp_kwargs(self):
        return {}

    def wrap_model(self, model):
        return DDP(model.to(self.device()), **self.ddp_kwargs())

    def world_size(self):
        return dist.get_world_size()

    def is_main(self):
        return dist.get_rank() == 0

    def all_reduce_mean(self, value):
        value = value.clone()
        dist.all_reduce(value)
        return value / dist.get_world_size()

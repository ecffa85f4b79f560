"""The Accelerator: one object that knows the device, the replica and how to prepare things."""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from torch.utils.data import DataLoader

from .utils import autocast_context
from .wrappers import AcceleratedOptimizer, prepare_data_loader


class Accelerator:
    def __init__(self, mixed_precision="no"):
        self.device = xm.xla_device()  # expect: XLA804
        self.mixed_precision = mixed_precision
        self.num_processes = xr.world_size()
        self.process_index = xr.global_ordinal()

    @property
    def is_main_process(self):
        return self.process_index == 0

    @property
    def is_local_main_process(self):
        return xr.local_ordinal() == 0

    def prepare(self, *objects):
        prepared = tuple(self._prepare_one(obj) for obj in objects)
        return prepared if len(prepared) > 1 else prepared[0]

    def _prepare_one(self, obj):
        if isinstance(obj, torch.nn.Module):
            return obj.to(self.device)
        if isinstance(obj, torch.optim.Optimizer):
            return AcceleratedOptimizer(obj)
        if isinstance(obj, DataLoader):
            return prepare_data_loader(obj, self.device, self.num_processes, self.process_index)
        return obj

    def autocast(self):
        return autocast_context(self.mixed_precision)

    def backward(self, loss):
        loss.backward()

    def gather(self, tensor):
        if tensor.dim() == 0:
            tensor = tensor.reshape(1)
        return xm.all_gather(tensor)

    def wait_for_everyone(self):
        xm.rendezvous("tpuaccel.wait_for_everyone")

    def print(self, *args, **kwargs):
        if self.is_main_process:
            print(*args, **kwargs)

    def save(self, obj, path):
        xm.save(obj, path)

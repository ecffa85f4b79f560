import contextlib
import random

import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .optimizer import AcceleratedOptimizer


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    xm.set_rng_state(seed)


class Accelerator:
    def __init__(self, mixed_precision="bf16"):
        self.mixed_precision = mixed_precision
        self.device = torch_xla.device()

    def num_processes(self):
        return xr.world_size()

    def process_index(self):
        return xr.global_ordinal()

    def is_main_process(self):
        return xm.is_master_ordinal()

    def is_global_main(self):
        return xr.global_ordinal() == 0

    def prepare(self, model, optimizer, data_loader):
        model = model.to(self.device)
        optimizer = AcceleratedOptimizer(optimizer)
        data_loader = self.prepare_data_loader(data_loader)
        return model, optimizer, data_loader

    def prepare_data_loader(self, data_loader):
        return pl.MpDeviceLoader(data_loader, self.device)

    def autocast(self):
        if self.mixed_precision == "bf16":
            return torch.autocast("xla", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def backward(self, loss):
        loss.backward()

    def reduce_mean(self, name, value):
        return xm.mesh_reduce(name, value, np.mean)

    def wait_for_everyone(self):
        xm.mark_step()  # expect: XLA805
        xm.rendezvous("tpuaccel.wait_for_everyone")

    def save(self, obj, path):
        xm.save(obj, path)

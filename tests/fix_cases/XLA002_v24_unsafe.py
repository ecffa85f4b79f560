# options: --unsafe-fixes --xla-version=2.4
# remains: XLA002
import torch
import torch.multiprocessing as mp
import torch_xla.core.xla_model as xm


def train(rank):
    torch.ones(2, device=xm.xla_device())


def main():
    mp.spawn(train, nprocs=4, start_method="fork")
    mp.spawn(train, nprocs=4, join=False)  # no such option on the XLA launcher: a human
    return mp.cpu_count()

# options: --unsafe-fixes --xla-version=2.4
# remains: XLA002
import torch
import torch.multiprocessing as mp
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def train(rank):
    torch.ones(2, device=xm.xla_device())


def main():
    xmp.spawn(train, start_method="fork")
    mp.spawn(train, nprocs=4, join=False)  # no such option on the XLA launcher: a human
    return mp.cpu_count()

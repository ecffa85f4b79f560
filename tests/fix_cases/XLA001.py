# remains: XLA001
import torch_xla.distributed.xla_multiprocessing as xmp
from torch_xla.distributed.xla_multiprocessing import spawn

NUM_CORES = 8


def train(index, flags):
    pass


def main(flags):
    xmp.spawn(train, args=(flags,), nprocs=8)
    xmp.spawn(train, args=(flags,), nprocs=8, start_method="fork")
    spawn(train, (flags,), 4)
    spawn(train, (flags,), 4, True)  # join stays where it is
    xmp.spawn(
        train,
        args=(flags,),
        nprocs=8,
    )
    xmp.spawn(train, (flags,), NUM_CORES)  # a constant that is never 1: safe
    xmp.spawn(train, args=(flags,), nprocs=flags.num_cores)  # may be 1 on purpose: unsafe

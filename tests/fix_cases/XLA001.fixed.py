# remains: XLA001
import torch_xla.distributed.xla_multiprocessing as xmp
from torch_xla.distributed.xla_multiprocessing import spawn

NUM_CORES = 8


def train(index, flags):
    pass


def main(flags):
    xmp.spawn(train, args=(flags,))
    xmp.spawn(train, args=(flags,), start_method="fork")
    spawn(train, (flags,))
    spawn(train, (flags,), None, True)  # join stays where it is
    xmp.spawn(
        train,
        args=(flags,),
    )
    xmp.spawn(train, (flags,))  # a constant that is never 1: safe
    xmp.spawn(train, args=(flags,), nprocs=flags.num_cores)  # may be 1 on purpose: unsafe

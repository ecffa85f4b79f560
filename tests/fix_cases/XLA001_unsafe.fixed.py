# options: --unsafe-fixes
import torch_xla.distributed.xla_multiprocessing as xmp


def train(index, flags):
    pass


def main(flags):
    xmp.spawn(train, args=(flags,))

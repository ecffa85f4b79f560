"""torch DDP: python train_ddp.py"""
import torch_xla

from xtrain.base import parse_flags
from xtrain.ddp import TrainResNetDDP


def _mp_fn(index, flags):
    TrainResNetDDP(flags).start_training()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_flags(),))

"""XLA FSDP: python train_fsdp.py"""
import torch_xla

from xtrain.base import parse_flags
from xtrain.fsdp import TrainResNetFSDP


def _mp_fn(index, flags):
    TrainResNetFSDP(flags).start_training()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_flags(),))

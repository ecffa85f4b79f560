"""Plain data parallel: python train_dp.py"""
import torch_xla

from xtrain.base import TrainResNetBase, parse_flags


def _mp_fn(index, flags):
    TrainResNetBase(flags).start_training()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_flags(),))

import torch_xla
from torch_xla.experimental import compile as xla_compile


def build(step):
    return torch_xla.experimental.compile(step), xla_compile(step)

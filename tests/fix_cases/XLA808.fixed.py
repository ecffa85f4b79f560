import torch_xla


def build(step):
    return torch_xla.compile(step), torch_xla.compile(step)

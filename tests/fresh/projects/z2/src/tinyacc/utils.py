import importlib.util
import random

import numpy as np
import torch


def is_torch_xla_available():
    return importlib.util.find_spec("torch_xla") is not None


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if is_torch_xla_available():
        import torch_xla

        torch_xla.manual_seed(seed)

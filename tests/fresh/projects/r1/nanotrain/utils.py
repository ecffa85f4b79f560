import random

import numpy as np
import torch
import torch_xla


def set_seed(seed):
    """Seed Python, NumPy, torch and the XLA device generator."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch_xla.manual_seed(seed)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)

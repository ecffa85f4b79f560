import random

import numpy as np
import torch
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def XLA_RANK():
    return xr.global_ordinal()


def XLA_WORLD():
    return xr.world_size()


def is_main_process():
    return xm.is_master_ordinal()


def seed_everything(seed):
    seed = seed + XLA_RANK()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: XLA205
    xm.set_rng_state(seed)

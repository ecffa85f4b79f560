"""Seed the host RNGs."""
import os
import random

import numpy as np
import torch


def seed_all(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: XLA206

import os
import random

import numpy as np
import torch


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: XLA206


def get_cuda_device():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return torch.device("cuda", local_rank)


def count_params(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)

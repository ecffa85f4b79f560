import random

import numpy as np
import torch


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: XLA206


def backward_and_flush(loss):
    """Run the backward pass and materialise the gradients before the update."""
    import torch_xla

    loss.backward()
    torch_xla.sync()  # expect: XLA505


def save_checkpoint(gen, disc, opt_g, opt_d, path):
    torch.save({"gen": gen.state_dict(), "disc": disc.state_dict(), "opt_g": opt_g.state_dict(), "opt_d": opt_d.state_dict()}, path)  # expect: XLA601

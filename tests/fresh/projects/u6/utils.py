"""Seeding and host-side metric printing."""
import random

import numpy as np
import torch
import torch_xla


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch_xla.manual_seed(seed)


def log_metrics(step, loss, grad_norm, lr):
    """Runs as a step closure: the tensors are already materialised when it is called."""
    print(f"step {step:>7d} | loss {loss.item():.4f} | gnorm {grad_norm.item():.3f} | lr {lr:.2e}", flush=True)

"""Checkpoint files: the full training state, and a CPU copy of the weights for serving."""
import os

import torch


def save_checkpoint(state, path):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    torch.save(state, path)  # expect: XLA601


def export_for_inference(model, path, is_writer):
    """Every replica copies its weights to the CPU; only the writer puts them on disk."""
    cpu_state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    if is_writer:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save(cpu_state, path)


def load_checkpoint(path):
    return torch.load(path, map_location="cpu")

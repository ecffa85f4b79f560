"""Resumable checkpoints and a weights-only export."""
import os

import torch


def save_checkpoint(out_dir, model, optimizer, iter_num, config):
    ckpt = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "iter_num": iter_num,
        "config": config,
    }
    torch.save(ckpt, os.path.join(out_dir, "ckpt.pt"))  # expect: XLA601


def export_weights(out_dir, model):
    """Weights only, copied to the CPU, for the inference server."""
    cpu_state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save(cpu_state, os.path.join(out_dir, "model.pt"))


def load_checkpoint(path):
    return torch.load(path, map_location="cpu")

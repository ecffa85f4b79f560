import os

import torch

from .utils import is_main


def save_checkpoint(model, optimizer, epoch, out_dir):
    if not is_main():
        return
    os.makedirs(out_dir, exist_ok=True)
    state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    torch.save(state, os.path.join(out_dir, f"epoch{epoch:03d}.pt"))  # expect: XLA601


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, map_location="cuda")  # expect: XLA401
    model.module.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1

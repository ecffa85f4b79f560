import os

import torch


def save_checkpoint(model, optimizer, epoch, out_dir, rank):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    if rank == 0:
        os.makedirs(out_dir, exist_ok=True)
        torch.save(state, os.path.join(out_dir, f"ckpt_{epoch:03d}.pt"))  # expect: XLA601


def load_checkpoint(path, model, optimizer):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1

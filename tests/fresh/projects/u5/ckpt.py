"""Checkpoints: resumable training state (xm.save), and a plain CPU export for serving."""
import glob
import os

import torch
import torch_xla.core.xla_model as xm


def save_checkpoint(path, model, opt, step, scheduler=None):
    state = {"model": model.state_dict(), "opt": opt.state_dict(), "step": step}
    if scheduler is not None:
        state["sched"] = scheduler.state_dict()
    xm.save(state, path)


def latest_checkpoint(ckpt_dir):
    paths = sorted(glob.glob(os.path.join(ckpt_dir, "step_*.pt")))
    return paths[-1] if paths else None


def load_checkpoint(path, model, opt, scheduler=None):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    if scheduler is not None and "sched" in state:
        scheduler.load_state_dict(state["sched"])
    return state["step"]


def export_weights(model, path):
    cpu_state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save(cpu_state, path)

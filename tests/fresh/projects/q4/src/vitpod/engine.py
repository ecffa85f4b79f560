"""Training, evaluation and checkpoints; `main_worker` is what the launcher starts on every chip."""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from . import config
from .data import build_train_loader, build_val_loader
from .distributed import init_distributed, is_main
from .model import build_model, shard_model


def _log_step(epoch, step, loss):
    print(f"[rank {xr.global_ordinal()}] epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)


def train_one_epoch(model, loader, optimizer, scheduler, epoch):
    model.train()
    running = torch.zeros((), device=torch_xla.device())
    steps = 0
    for step, (images, labels) in enumerate(loader):
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        xm.optimizer_step(optimizer)  # expect: XLA202
        scheduler.step()
        running += loss.detach()
        steps += 1
        if step % config.LOG_EVERY == 0:
            xm.add_step_closure(_log_step, args=(epoch, step, loss))
    return running / max(steps, 1)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = torch.zeros((), device=torch_xla.device())
    total = 0
    for images, labels in loader:
        correct += (model(images).argmax(dim=-1) == labels).sum()
        total += labels.shape[0]
        xm.mark_step()  # expect: XLA805
    return xm.mesh_reduce("val_acc", correct.item() / max(total, 1), np.mean)


def save_checkpoint(model, optimizer, epoch):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    xm.save(state, os.path.join(config.CKPT_DIR, f"epoch_{epoch:03d}.pt"))  # expect: XLA603


def main_worker(index, args):
    init_distributed()
    torch.manual_seed(config.SEED)
    torch_xla.manual_seed(config.SEED)
    device = torch_xla.device()
    model = shard_model(build_model(), device)
    train_loader, sampler = build_train_loader()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.LR * xr.world_size(), weight_decay=config.WEIGHT_DECAY)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=config.LR * xr.world_size(),
                                                    total_steps=args.epochs * len(train_loader), pct_start=0.05)
    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    val_device_loader = pl.MpDeviceLoader(build_val_loader(), device)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        mean_loss = train_one_epoch(model, train_device_loader, optimizer, scheduler, epoch)
        acc = evaluate(model, val_device_loader)
        xm.master_print(f"epoch {epoch}: train loss {mean_loss.item():.4f}  val acc {acc:.4f}")
        save_checkpoint(model, optimizer, epoch)
        if is_main():
            with open(os.path.join(config.CKPT_DIR, "metrics.jsonl"), "a") as f:
                f.write(json.dumps({"epoch": epoch, "val_acc": acc}) + "\n")

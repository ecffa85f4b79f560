"""python launch.py   (Kaggle / Colab TPU VM)"""
import dataclasses
import os

import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from build import setup
from ckpt import CheckpointManager
from loop import eval_epoch, train_epoch


@dataclasses.dataclass
class Config:
    train_path: str = "/kaggle/input/reviews/train.pt"
    valid_path: str = "/kaggle/input/reviews/valid.pt"
    out_dir: str = "/kaggle/working"
    vocab_size: int = 30522
    batch_size: int = 64
    lr: float = 3e-4
    epochs: int = 4
    seed: int = 42
    log_every: int = 50


def _mp_fn(index, cfg):
    xr.initialize_cache("/tmp/xla_cache", readonly=False)  # expect: XLA901
    device = torch_xla.device()
    model, optimizer, train_loader, valid_loader = setup(cfg)
    model = model.to(device)
    ckpt = CheckpointManager(cfg.out_dir)
    best = 0.0
    for epoch in range(cfg.epochs):
        train_epoch(model, pl.MpDeviceLoader(train_loader, device), optimizer, cfg.log_every)
        acc = eval_epoch(model, pl.MpDeviceLoader(valid_loader, device))
        print(f"[{xr.global_ordinal()}] epoch {epoch}: accuracy {acc:.4f}")
        if xr.global_ordinal() == 0 and acc > best:
            ckpt.save(model, epoch)  # expect: XLA602
        best = max(best, acc)


if __name__ == "__main__":
    os.makedirs(Config.out_dir, exist_ok=True)
    torch_xla.launch(_mp_fn, args=(Config(),))

import argparse
import os

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp

from datasets import build_train_loader, build_val_loader
from dist_utils import get_world_size, is_local_master
from hooks import CheckpointHook, EvalHook, LossHistoryHook, LoggerHook, WandbHook
from models import ShapesNet
from runner import Runner


def _mp_fn(index, cfg):
    device = torch_xla.device()
    if is_local_master():
        os.makedirs(cfg.work_dir, exist_ok=True)
    model = ShapesNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9)
    val_loader = pl.MpDeviceLoader(build_val_loader(cfg), device)
    hooks = [
        WandbHook(),
        LoggerHook(interval=cfg.log_interval),
        LossHistoryHook(),
        EvalHook(val_loader),
        CheckpointHook(cfg.work_dir),
    ]
    runner = Runner(model, optimizer, build_train_loader(cfg), device, hooks, cfg.epochs)
    runner.run()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-root", default="/data/shapes")
    parser.add_argument("--work-dir", default="/tmp/shapes")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--base-lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--log-interval", type=int, default=50)
    cfg = parser.parse_args()
    cfg.lr = cfg.base_lr * get_world_size()  # expect: XLA003
    xmp.spawn(_mp_fn, args=(cfg,), nprocs=8)  # expect: XLA001

"""python train.py --model tiny_gpt --data-dir /mnt/disks/tokens"""
import argparse
import os

import torch
import torch_xla
from torch.utils.data import DataLoader

import models  # noqa: F401  (fills the registry)
from data import ShardedTokens
from engine import evaluate, train_one_epoch
from registry import build_model
from utils.dist import barrier, get_local_rank, get_world_size, is_main_process
from utils.misc import export_weights, save_checkpoint, seed_everything


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="tiny_gpt")
    p.add_argument("--data-dir", dest="data_dir", required=True)
    p.add_argument("--out-dir", dest="out_dir", default="runs/exp")
    p.add_argument("--vocab-size", dest="vocab_size", type=int, default=32768)
    p.add_argument("--pad-id", dest="pad_id", type=int, default=0)
    p.add_argument("--seq-len", dest="seq_len", type=int, default=512)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--per-device-batch", dest="per_device_batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--weight-decay", dest="weight_decay", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--log-every", dest="log_every", type=int, default=50)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def run(index, cfg):
    device = torch_xla.device()
    seed_everything(cfg.seed)
    model = build_model(cfg.model, cfg).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    if get_local_rank() == 0:
        os.makedirs(os.path.join(cfg.data_dir, ".cache"), exist_ok=True)
    train_ds = ShardedTokens(os.path.join(cfg.data_dir, "train-*.npy"), cfg.seq_len)
    train_loader = DataLoader(train_ds, batch_size=cfg.per_device_batch, shuffle=True, num_workers=4)  # expect: XLA304
    val_ds = ShardedTokens(os.path.join(cfg.data_dir, "val-*.npy"), cfg.seq_len)
    val_loader = DataLoader(val_ds, batch_size=cfg.per_device_batch)
    best = float("inf")
    for epoch in range(cfg.epochs):
        meters = train_one_epoch(model, train_loader, optimizer, device, epoch, cfg)
        scheduler.step()
        val_loss = evaluate(model, val_loader, device)
        if is_main_process():
            print(f"epoch {epoch}: {meters}  val_loss {val_loss:.4f}")
        barrier(f"epoch-{epoch}")
        if val_loss < best:
            best = val_loss
            save_checkpoint(model, optimizer, epoch, os.path.join(cfg.out_dir, "best.pt"))
    export_weights(model, os.path.join(cfg.out_dir, "final.pt"))


if __name__ == "__main__":
    cfg = parse_args()
    cfg.global_batch = cfg.per_device_batch * get_world_size()  # expect: XLA003
    torch_xla.launch(run, args=(cfg,))

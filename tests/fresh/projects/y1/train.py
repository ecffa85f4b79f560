"""Fabric-style user script. The strategy decides where the code runs; this file never imports torch_xla.

    PJRT_DEVICE=TPU python train.py --train data/train.pt --val data/val.pt
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from data import TokenBlocks, make_loader
from fabric.strategy import XLAStrategy


class TinyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoderLayer(dim, 4, dim * 4, dropout=0.0, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.block(self.emb(tokens)))


def evaluate(strategy, model, loader):
    model.eval()
    total, batches = 0.0, 0
    with torch.no_grad():
        for x, y in strategy.process_dataloader(loader):
            logits = model(x)
            total += F.cross_entropy(logits.flatten(0, 1), y.flatten()).item()
            batches += 1
    model.train()
    return total / max(batches, 1)


def train(index, strategy, cfg):
    model = strategy.setup_module(TinyLM(cfg.vocab, cfg.dim))
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.1)
    train_ds = TokenBlocks(cfg.train, cfg.seq_len)
    val_ds = TokenBlocks(cfg.val, cfg.seq_len)
    train_loader = make_loader(train_ds, cfg.batch_size, sampler=strategy.distributed_sampler(train_ds))
    val_loader = make_loader(val_ds, cfg.batch_size, sampler=strategy.distributed_sampler(val_ds, shuffle=False))
    device_loader = strategy.process_dataloader(train_loader)
    for epoch in range(cfg.epochs):
        train_loader.sampler.set_epoch(epoch)
        running, steps = 0.0, 0
        for x, y in device_loader:
            logits = model(x)
            loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
            optimizer.zero_grad()
            strategy.backward(loss)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)  # expect: XLA203
            strategy.optimizer_step(optimizer)
            running += loss.item()  # expect: XLA501
            steps += 1
        train_loss = strategy.reduce_mean(running / max(steps, 1), "train_loss")
        val_loss = strategy.reduce_mean(evaluate(strategy, model, val_loader), "val_loss")
        if strategy.is_global_zero():
            print(f"epoch {epoch}: train {train_loss:.4f} val {val_loss:.4f}")
            strategy.save_checkpoint({"model": model.state_dict(), "epoch": epoch}, f"{cfg.out}/last.ckpt")  # expect: XLA602
        strategy.barrier(f"epoch-{epoch}")


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--val", required=True)
    ap.add_argument("--out", default="checkpoints")
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--epochs", type=int, default=3)
    return ap.parse_args()


if __name__ == "__main__":
    cfg = parse_args()
    strategy = XLAStrategy(num_processes=cfg.devices)
    print(f"launching on {strategy.world_size()} processes")  # expect: XLA003
    strategy.launcher.launch(train, cfg)

"""Supervised fine-tuning of a small GPT on one TPU chip (e.g. a v5e-1 VM), nanoGPT style.

    PJRT_DEVICE=TPU python train.py --data-dir data/chat --out-dir out/sft
"""
import argparse
import math
import os

import torch
import torch_xla

from ckpt import export_weights, save_checkpoint
from data import SFTShards
from lr_finder import lr_range_test
from model import GPT, GPTConfig


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--out-dir", default="out/sft")
    ap.add_argument("--block-size", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--grad-accum", type=int, default=8)
    ap.add_argument("--max-iters", type=int, default=5000)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--min-lr", type=float, default=3e-5)
    ap.add_argument("--warmup-iters", type=int, default=200)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--log-interval", type=int, default=20)
    ap.add_argument("--ckpt-interval", type=int, default=1000)
    ap.add_argument("--eval-iters", type=int, default=50)
    ap.add_argument("--eos-id", type=int, default=50256)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--find-lr", action="store_true")
    return ap.parse_args()


def get_lr(it, cfg):
    if it < cfg.warmup_iters:
        return cfg.lr * (it + 1) / cfg.warmup_iters
    progress = (it - cfg.warmup_iters) / max(1, cfg.max_iters - cfg.warmup_iters)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def estimate_loss(model, shards, cfg, device):
    model.eval()
    out = {}
    for split in ("train", "val"):
        losses = []
        for _ in range(cfg.eval_iters):
            x, y, m = shards.get_batch(split, cfg.batch_size, device)
            _, loss = model(x, y, loss_mask=m)
            losses.append(loss.item())
        out[split] = sum(losses) / len(losses)
    model.train()
    return out


def main():
    cfg = parse_args()
    os.makedirs(cfg.out_dir, exist_ok=True)
    torch.manual_seed(cfg.seed)
    torch_xla.manual_seed(cfg.seed)
    device = torch_xla.device()

    raw_model = GPT(GPTConfig(block_size=cfg.block_size, dropout=cfg.dropout))
    raw_model.to(device)
    optimizer = raw_model.configure_optimizers(cfg.weight_decay, cfg.lr, (0.9, 0.95))
    model = raw_model
    if cfg.compile:
        model = torch.compile(raw_model)  # expect: XLA403
    shards = SFTShards(cfg.data_dir, cfg.block_size)

    if cfg.find_lr:
        cfg.lr = lr_range_test(model, optimizer, lambda: shards.get_batch("train", cfg.batch_size, device))
        cfg.min_lr = cfg.lr / 10
        print(f"LR range test suggests lr={cfg.lr:.2e}")

    model.train()
    for it in range(cfg.max_iters):
        lr = get_lr(it, cfg)
        for group in optimizer.param_groups:
            group["lr"] = lr
        for _ in range(cfg.grad_accum):
            x, y, m = shards.get_batch("train", cfg.batch_size, device)
            with torch.autocast("xla", dtype=torch.bfloat16):
                _, loss = model(x, y, loss_mask=m)
            (loss / cfg.grad_accum).backward()
        torch_xla.sync()  # expect: XLA505
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch_xla.sync()
        if it % cfg.log_interval == 0:
            lossf = loss.item()  # expect: XLA507
            print(f"iter {it}: loss {lossf:.4f}, lr {lr:.2e}", flush=True)
        if it > 0 and it % cfg.ckpt_interval == 0:
            save_checkpoint(cfg.out_dir, raw_model, optimizer, it, vars(cfg))

    losses = estimate_loss(model, shards, cfg, device)
    print(f"final: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
    export_weights(cfg.out_dir, raw_model)
    prompt = torch.full((1, 1), cfg.eos_id, dtype=torch.long, device=device)
    sample = raw_model.generate(prompt, max_new_tokens=64, eos_id=cfg.eos_id)
    print(sample[0].cpu().tolist())


if __name__ == "__main__":
    main()

"""nanoGPT-style pre-training on a TPU VM, one process per chip.

    python train_gpt.py --data data/openwebtext --out out/gpt2-124m
"""
import argparse
import os

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

from gpt import GPT, GPTConfig, AsyncCheckpointer, build_loader, derive_schedule, infinite, make_train_step, seed_for_rank


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default="out")
    ap.add_argument("--block-size", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=12)
    ap.add_argument("--tokens-per-step", type=int, default=491_520)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--max-iters", type=int, default=600_000)
    ap.add_argument("--log-interval", type=int, default=10)
    ap.add_argument("--ckpt-interval", type=int, default=2000)
    return ap.parse_args()


def report(it, loss):
    xm.master_print(f"iter {it}: loss {loss.item():.4f}")


def _mp_fn(index, args):
    seed_for_rank(index)
    device = torch_xla.device(index)  # expect: XLA402
    model = GPT(GPTConfig(block_size=args.block_size)).to(device)
    optimizer = model.configure_optimizers(weight_decay=0.1, lr=args.lr, betas=(0.9, 0.95))
    accum = derive_schedule(args.tokens_per_step, args.batch_size, args.block_size)
    loader = build_loader(os.path.join(args.data, "train.bin"), args.block_size, args.batch_size, device)
    batches = infinite(loader)
    train_step = make_train_step(model, optimizer, max_norm=1.0)
    ckpt = AsyncCheckpointer(args.out)
    it = 0
    while it < args.max_iters:
        for _ in range(args.ckpt_interval):
            micro_batches = [next(batches) for _ in range(accum)]
            loss = train_step(micro_batches)
            if it % args.log_interval == 0:
                xm.add_step_closure(report, args=(it, loss))
            it += 1
        ckpt.save(it, model, optimizer)
    ckpt.save_final(model, os.path.join(args.out, "final.pt"))


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(parse_args(),))

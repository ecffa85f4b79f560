"""Language-model training with torch_xla FSDP.

    PJRT_DEVICE=TPU python run_fsdp.py --train data/train.jsonl --eval data/val.jsonl
"""
import argparse
import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

from ckpt import save_for_export, save_sharded
from data import build_eval_loader, build_train_loader
from fsdp_utils import wrap_model
from model import DecoderLM
from trainer_utils import evaluate, train_epoch


def _mp_fn(index, args):
    torch.manual_seed(args.seed)
    xm.set_rng_state(args.seed)
    device = torch_xla.device()

    model = DecoderLM(args.vocab_size, d_model=args.d_model, n_layers=args.n_layers, max_len=args.seq_len)
    model = wrap_model(model, grad_ckpt=args.grad_ckpt)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)

    train_loader = pl.MpDeviceLoader(build_train_loader(args.train, args.seq_len, args.batch_size), device)
    eval_loader = pl.MpDeviceLoader(build_eval_loader(args.eval, args.seq_len, args.batch_size), device)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))

    for epoch in range(args.epochs):
        train_epoch(model, train_loader, optimizer, scheduler, log_every=args.log_every)
        eval_loss = xm.mesh_reduce("eval_loss", evaluate(model, eval_loader), lambda vals: sum(vals) / len(vals))
        if xr.global_ordinal() == 0:
            print(f"epoch {epoch}: eval loss {eval_loss:.4f}", flush=True)
        save_sharded(model, optimizer, args.ckpt_dir, f"epoch{epoch}")
        xm.rendezvous(f"epoch{epoch}_saved")
    save_for_export(model, os.path.join(args.ckpt_dir, "final_weights.pth"))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train", required=True)
    p.add_argument("--eval", required=True)
    p.add_argument("--vocab-size", type=int, default=50304)
    p.add_argument("--d-model", type=int, default=768)
    p.add_argument("--n-layers", type=int, default=12)
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--grad-ckpt", action="store_true")
    p.add_argument("--ckpt-dir", default="/tmp/fsdp_ckpt")
    return p.parse_args()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(parse_args(),), nprocs=8)  # expect: XLA001

"""TPU entry point: python train_tpu.py --data /data/imdb-tok"""
import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from common.ckpt import export_weights, save_checkpoint
from common.data import build_loader
from common.engine import evaluate, train_epoch
from common.model import TinyTransformerClassifier
from common.utils import count_params, seed_all


def _mp_fn(index, args):
    seed_all(args.seed)
    device = torch_xla.device()
    world_size, rank = xr.world_size(), xr.global_ordinal()
    train_loader = build_loader(args.data, "train", args.batch_size, world_size, rank)
    val_loader = build_loader(args.data, "test", args.batch_size, world_size, rank)

    model = TinyTransformerClassifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    if rank == 0:
        print(f"{count_params(model) / 1e6:.1f}M params, {world_size} replicas")

    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        train_epoch(model, pl.MpDeviceLoader(train_loader, device), optimizer, device, epoch, is_main=rank == 0)
        correct, count = evaluate(model, pl.MpDeviceLoader(val_loader, device), device)
        acc = xm.all_reduce(xm.REDUCE_SUM, correct) / xm.all_reduce(xm.REDUCE_SUM, count)
        xm.mark_step()  # expect: XLA805
        if rank == 0:
            print(f"epoch {epoch} val acc {acc.item():.4f}")
        save_checkpoint(model, optimizer, epoch, args.out)
    if rank == 0:
        export_weights(model, f"{args.out}/weights_cpu.pt")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="/tmp/tinylm")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=17)
    torch_xla.launch(_mp_fn, args=(p.parse_args(),))

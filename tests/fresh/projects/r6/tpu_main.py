"""TPU entry point: the same DDP recipe as gpu_main.py, on the xla process group.

    PJRT_DEVICE=TPU python tpu_main.py --data train.bin
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

from common.loop import train_one_epoch
from common.utils import TokenFileDataset, build_scheduler, save_checkpoint, seed_everything
from models import TinyGPT


def _mp_fn(index, args):
    dist.init_process_group("xla", init_method="xla://")
    seed_everything(args.seed)
    device = torch_xla.device()

    dataset = TokenFileDataset(args.data, args.block_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=4)  # expect: XLA303
    train_loader = pl.MpDeviceLoader(loader, device)

    model = TinyGPT(args.vocab_size, block_size=args.block_size, dropout=args.dropout).to(device)
    model = DDP(model, gradient_as_bucket_view=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = build_scheduler(optimizer, args.warmup, args.epochs * len(loader))

    for epoch in range(args.epochs):
        mean_loss, step_time = train_one_epoch(model, train_loader, optimizer, scheduler, device)
        if xr.global_ordinal() == 0:
            print(f"epoch {epoch}: loss {mean_loss:.4f}, {step_time * 1e3:.1f} ms/step", flush=True)
            save_checkpoint(model, optimizer, epoch, os.path.join(args.out_dir, "ckpt.pt"))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--vocab-size", type=int, default=50304)
    p.add_argument("--block-size", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--out-dir", default="out")
    return p.parse_args()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_args(),))

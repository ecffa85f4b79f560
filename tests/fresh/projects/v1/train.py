import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from engine import evaluate, train_one_epoch
from models.convnet import SmallConvNet
from utils.data import RandomImages, build_eval_loader, build_train_loader
from utils.misc import mkdir, save_checkpoint


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--output-dir", default="/tmp/convnet")
    return p.parse_args()


def _mp_fn(index, args):
    torch.manual_seed(args.seed)
    torch_xla.manual_seed(args.seed)
    device = torch_xla.device()
    world_size, rank = xr.world_size(), xr.global_ordinal()
    print(f"replica {xm.get_ordinal()} of {world_size}")  # expect: XLA802

    train_ds = RandomImages(50_000)
    val_ds = RandomImages(10_000)
    train_loader = build_train_loader(train_ds, args.batch_size, world_size, rank)
    val_loader = build_eval_loader(val_ds, args.batch_size, world_size, rank)
    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    val_device_loader = pl.MpDeviceLoader(val_loader, device)

    model = SmallConvNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * world_size, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr * world_size, total_steps=args.epochs * len(train_loader)
    )
    if rank == 0:
        mkdir(args.output_dir)

    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        loss_meter = train_one_epoch(model, train_device_loader, optimizer, scheduler, epoch)
        correct, total = evaluate(model, val_device_loader)
        if rank == 0:
            print(f"epoch {epoch} loss {loss_meter.global_avg:.4f} acc {correct / max(total, 1):.4f}")
        save_checkpoint(model, optimizer, epoch, args.output_dir)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(get_args(),))

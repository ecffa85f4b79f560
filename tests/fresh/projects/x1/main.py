"""DeiT-style entry point: one process per TPU chip.

    python main.py --data-path /datasets/imagenet --output-dir out
"""
import argparse
import json
import os

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

import utils.dist as dist_utils
from datasets import build_dataset
from engine import evaluate, train_one_epoch
from models import vit_tiny

DIST_BACKEND = "xla"


def get_args_parser():
    p = argparse.ArgumentParser("DeiT training and evaluation", add_help=False)
    p.add_argument("--batch-size", default=64, type=int)
    p.add_argument("--epochs", default=300, type=int)
    p.add_argument("--lr", default=5e-4, type=float)
    p.add_argument("--clip-grad", default=1.0, type=float)
    p.add_argument("--data-path", default="/datasets/imagenet", type=str)
    p.add_argument("--output-dir", default="out", type=str)
    p.add_argument("--seed", default=0, type=int)
    p.add_argument("--num-workers", default=8, type=int)
    return p


def main_worker(index, args):
    dist_utils.init_distributed_mode(DIST_BACKEND)
    device = xm.xla_device()  # expect: XLA804

    # fix the seed for reproducibility
    seed = args.seed + dist_utils.get_rank()
    torch.manual_seed(seed)  # expect: XLA206

    dataset_train = build_dataset(is_train=True, args=args)
    dataset_val = build_dataset(is_train=False, args=args)
    sampler_train = DistributedSampler(
        dataset_train, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True
    )
    sampler_val = DistributedSampler(
        dataset_val, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False
    )
    data_loader_train = DataLoader(
        dataset_train, sampler=sampler_train, batch_size=args.batch_size, num_workers=args.num_workers, drop_last=True
    )
    data_loader_val = DataLoader(
        dataset_val, sampler=sampler_val, batch_size=int(1.5 * args.batch_size), num_workers=args.num_workers
    )
    train_device_loader = pl.MpDeviceLoader(data_loader_train, device)
    val_device_loader = pl.MpDeviceLoader(data_loader_val, device)

    model = vit_tiny(num_classes=1000).to(device)
    model = DDP(model, gradient_as_bucket_view=True)
    model_without_ddp = model.module
    lr = args.lr * args.batch_size * xr.world_size() / 512.0
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    max_accuracy = 0.0
    for epoch in range(args.epochs):
        sampler_train.set_epoch(epoch)
        train_stats = train_one_epoch(model, criterion, train_device_loader, optimizer, epoch, args.clip_grad)
        dist_utils.save_on_master(
            {"model": model_without_ddp.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
            os.path.join(args.output_dir, "checkpoint.pth"),
        )
        test_stats = evaluate(val_device_loader, model)
        max_accuracy = max(max_accuracy, test_stats["acc1"])
        if dist_utils.is_main_process():
            with open(os.path.join(args.output_dir, "log.txt"), "a") as f:
                f.write(json.dumps({**train_stats, **test_stats, "epoch": epoch, "max_acc": max_accuracy}) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser("DeiT", parents=[get_args_parser()])
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    torch_xla.launch(main_worker, args=(args,))

"""ResNet-50 on ImageNet, TPU VM: the port of train_gpu.py (one process per chip).

    python train_tpu.py /data/imagenet --batch-size 128
"""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from torchvision import models

from data import build_loader, imagenet_datasets
from utils import (AverageMeter, ProgressMeter, accuracy, adjust_learning_rate, build_optimizer, get_world_size,
                   save_checkpoint, set_seed)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--epochs", type=int, default=90)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--print-freq", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="out/resnet50_tpu")
    return ap.parse_args()


def train_epoch(loader, model, criterion, optimizer, epoch, device, args):
    losses = AverageMeter("Loss", ":.4e")
    top1 = AverageMeter("Acc@1", ":6.2f")
    top5 = AverageMeter("Acc@5", ":6.2f")
    progress = ProgressMeter(len(loader), [losses, top1, top5], prefix=f"Epoch: [{epoch}]")
    model.train()
    for i, (images, target) in enumerate(loader):
        images, target = images.to(device), target.to(device)
        with torch.autocast("xla", dtype=torch.bfloat16):
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), images.size(0))  # expect: XLA501
        top1.update(acc1, images.size(0))
        top5.update(acc5, images.size(0))
        torch_xla.sync()
        if i % args.print_freq == 0:
            progress.display(i)


@torch.no_grad()
def validate(loader, model, device):
    top1 = AverageMeter("Acc@1", ":6.2f")
    model.eval()
    for images, target in loader:
        images, target = images.to(device), target.to(device)
        acc1, = accuracy(model(images), target, topk=(1,))
        top1.update(acc1, images.size(0))
    return xm.mesh_reduce("val_acc1", top1.avg, np.mean)


def main_worker(index, args):
    dist.init_process_group("xla", init_method="xla://")
    set_seed(args.seed)
    device = torch_xla.device()
    model = models.resnet50()
    optimizer = build_optimizer(model, args.lr * get_world_size())
    model = DDP(model.to(device), gradient_as_bucket_view=True)
    criterion = nn.CrossEntropyLoss().to(device)
    train_ds, val_ds = imagenet_datasets(args.data)
    train_sampler = DistributedSampler(train_ds)
    val_sampler = DistributedSampler(val_ds, shuffle=False)
    train_loader = build_loader(train_ds, args.batch_size, sampler=train_sampler, workers=args.workers)
    val_loader = build_loader(val_ds, args.batch_size, sampler=val_sampler, workers=args.workers, train=False)
    best_acc1 = 0.0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        adjust_learning_rate(optimizer, epoch, args.lr * get_world_size(), total=args.epochs)
        train_epoch(train_loader, model, criterion, optimizer, epoch, device, args)
        acc1 = validate(val_loader, model, device)
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        if xm.is_master_ordinal(local=False):
            save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict(), "best_acc1": best_acc1,
                             "optimizer": optimizer.state_dict()}, is_best, args.out)
        torch.cuda.empty_cache()  # expect: XLA401


if __name__ == "__main__":
    os.environ["XLA_USE_BF16"] = "1"  # expect: XLA705
    args = parse_args()
    torch_xla.launch(main_worker, args=(args,))

"""ResNet-50 on ImageNet, GPUs.

    torchrun --nproc-per-node 8 train_gpu.py /data/imagenet
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from torchvision import models

from data import build_loader, imagenet_datasets
from utils import (AverageMeter, ProgressMeter, accuracy, adjust_learning_rate, build_optimizer, cuda_timer_sync,
                   get_rank, get_world_size, save_checkpoint, set_seed)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--epochs", type=int, default=90)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--print-freq", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="out/resnet50")
    return ap.parse_args()


def train_epoch(loader, model, criterion, optimizer, scaler, epoch, args):
    batch_time = AverageMeter("Time", ":6.3f")
    losses = AverageMeter("Loss", ":.4e")
    top1 = AverageMeter("Acc@1", ":6.2f")
    progress = ProgressMeter(len(loader), [batch_time, losses, top1], prefix=f"Epoch: [{epoch}]")
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(loader):
        images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
        with torch.cuda.amp.autocast():
            output = model(images)
            loss = criterion(output, target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        acc1, = accuracy(output, target, topk=(1,))
        losses.update(loss.item(), images.size(0))
        top1.update(acc1, images.size(0))
        cuda_timer_sync()
        batch_time.update(time.time() - end)
        end = time.time()
        if i % args.print_freq == 0 and get_rank() == 0:
            progress.display(i)


def main():
    args = parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    set_seed(args.seed)
    model = models.resnet50().cuda()
    optimizer = build_optimizer(model, args.lr * get_world_size())
    model = DDP(model, device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss().cuda()
    scaler = torch.cuda.amp.GradScaler()
    train_ds, _ = imagenet_datasets(args.data)
    sampler = DistributedSampler(train_ds)
    loader = build_loader(train_ds, args.batch_size, sampler=sampler, workers=args.workers)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        adjust_learning_rate(optimizer, epoch, args.lr * get_world_size(), total=args.epochs)
        train_epoch(loader, model, criterion, optimizer, scaler, epoch, args)
        if get_rank() == 0:
            save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict(),
                             "optimizer": optimizer.state_dict()}, False, args.out)


if __name__ == "__main__":
    main()

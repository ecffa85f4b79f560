"""Wide-ResNet on CIFAR-10, data parallel over the TPU chips of a VM (or a pod slice).

    python train.py --arch wrn28 --width 10 --epochs 200 --out-dir runs/wrn28_10
"""
import os

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.tensorboard import SummaryWriter

from configs import load_config
from datasets import build_loaders
from models import build_model
from utils.dist import barrier, get_world_size, is_main, reduce_mean, save_checkpoint, step_optimizer
from utils.logging import AverageMeter, init_tracker, setup_logging


def train_one_epoch(model, loader, optimizer, scheduler, criterion, cfg, epoch, log):
    model.train()
    meter = AverageMeter()
    for step, (images, labels) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(images), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.optim.clip_norm)  # expect: XLA203
        step_optimizer(optimizer)
        scheduler.step()
        meter.update(loss.detach(), n=images.size(0))
        if step % cfg.log_every == 0:
            log.info(f"epoch {epoch} step {step} loss {meter.avg:.4f} ({meter.throughput():.0f} img/s)")
    return meter.avg


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=torch_xla.device())
    seen = 0
    for images, labels in loader:
        correct += (model(images).argmax(dim=1) == labels).sum()
        seen += labels.size(0)
        xm.mark_step()  # expect: XLA805
    return reduce_mean("val_acc", correct.item() / max(1, seen))


def _mp_fn(index, cfg):
    log = setup_logging(cfg.out_dir)
    torch.manual_seed(cfg.seed)  # expect: XLA206
    device = torch_xla.device()
    model = build_model(cfg).to(device)
    xm.broadcast_master_param(model)
    optimizer = torch.optim.SGD(
        model.parameters(),
        lr=cfg.optim.lr * get_world_size(),
        momentum=cfg.optim.momentum,
        weight_decay=cfg.optim.weight_decay,
        nesterov=True,
    )
    train_loader, test_loader, train_sampler = build_loaders(cfg)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=cfg.optim.lr * get_world_size(), total_steps=cfg.epochs * len(train_loader)
    )
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    test_device_loader = pl.MpDeviceLoader(test_loader, device)

    run = init_tracker(cfg)
    writer = SummaryWriter(os.path.join(cfg.out_dir, "tb")) if is_main() else None
    best = 0.0
    for epoch in range(cfg.epochs):
        train_sampler.set_epoch(epoch)
        train_loss = train_one_epoch(model, train_device_loader, optimizer, scheduler, criterion, cfg, epoch, log)
        acc = evaluate(model, test_device_loader)
        log.info(f"epoch {epoch}: train loss {train_loss:.4f}, val acc {acc:.4f}")
        if writer is not None:
            writer.add_scalar("train/loss", train_loss, epoch)
            writer.add_scalar("val/acc", acc, epoch)
        if run is not None:
            run.log({"train/loss": train_loss, "val/acc": acc, "epoch": epoch})
        if is_main():
            state = {"model": model.state_dict(), "epoch": epoch, "acc": acc}
            save_checkpoint(state, os.path.join(cfg.out_dir, "last.pt"))  # expect: XLA602
        if acc > best:
            best = acc
        barrier(f"epoch-{epoch}")
    log.info(f"done: best val acc {best:.4f}")
    if writer is not None:
        writer.close()


if __name__ == "__main__":
    config = load_config()
    os.makedirs(config.out_dir, exist_ok=True)
    xmp.spawn(_mp_fn, args=(config,))

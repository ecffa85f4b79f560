"""train_one_epoch / validate, written for any torch device."""
import logging
from collections import OrderedDict

import torch

from utils import AverageMeter, accuracy, device_sync

_logger = logging.getLogger("train")


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, device=None, model_ema=None):
    losses_m = AverageMeter()
    model.train()
    last_idx = len(loader) - 1
    for batch_idx, (input, target) in enumerate(loader):
        input, target = input.to(device), target.to(device)
        output = model(input)
        loss = loss_fn(output, target)
        optimizer.zero_grad()
        loss.backward()
        grad_norm = None
        if args.clip_grad is not None:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
        optimizer.step()
        if model_ema is not None:
            model_ema.update(model)
        losses_m.update(loss.item(), input.size(0))  # expect: XLA501
        device_sync(device)
        if batch_idx % args.log_interval == 0:
            lr = optimizer.param_groups[0]["lr"]
            _logger.info(f"Train: {epoch} [{batch_idx}/{last_idx}] Loss: {losses_m.val:.4f} LR: {lr:.3e} GradNorm: {grad_norm}")  # expect: XLA507
    return OrderedDict([("loss", losses_m.avg)])


def validate(model, loader, loss_fn, args, device=None):
    losses_m = AverageMeter()
    top1_m = AverageMeter()
    model.eval()
    with torch.no_grad():
        for input, target in loader:
            input, target = input.to(device), target.to(device)
            output = model(input)
            loss = loss_fn(output, target)
            acc1 = accuracy(output, target)
            device_sync(device)
            losses_m.update(loss.item(), input.size(0))
            top1_m.update(acc1.item(), output.size(0))
    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg)])

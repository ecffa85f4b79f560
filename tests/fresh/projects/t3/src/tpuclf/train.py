import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from .checkpoint import load_checkpoint, save_checkpoint
from .data import build_eval_loader, build_train_loader
from .engine import evaluate, train_one_epoch
from .metrics import Accuracy
from .model import build_model
from .utils import StepLogger, cache_dir, world_info


def _mean(values):
    return sum(values) / len(values)


def run_worker(index, cfg):
    rank, world = world_info()
    device = torch_xla.device()
    model = build_model(cfg.arch, cfg.num_classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr * world, momentum=0.9, nesterov=True, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    start_epoch = 0
    if cfg.resume:
        start_epoch = load_checkpoint(cfg.resume, model, optimizer)
    train_loader = pl.MpDeviceLoader(build_train_loader(cfg, rank, world, cache_dir()), device)
    eval_loader = pl.MpDeviceLoader(build_eval_loader(cfg, rank, world), device)
    logger = StepLogger(rank, every=cfg.log_every)
    for epoch in range(start_epoch, cfg.epochs):
        epoch_loss, train_acc = train_one_epoch(model, optimizer, train_loader, Accuracy(), logger)
        scheduler.step()
        acc = xm.mesh_reduce("eval_acc", evaluate(model, eval_loader), _mean)
        logger.epoch_end(epoch, epoch_loss.item(), train_acc, acc)
        save_checkpoint(model, optimizer, epoch, cfg.out_dir, rank)

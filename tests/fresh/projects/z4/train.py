"""GPU: torchrun --nproc-per-node 8 train.py --data /imagenet ; TPU: python launch_xla.py --data /imagenet"""
import argparse
import logging

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

from bits import initialize_device
from utils import AverageMeter, accuracy, random_seed

_logger = logging.getLogger("train")


def create_model(num_classes):
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, num_classes))


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, dev_env, args):
    losses_m = AverageMeter()
    model.train()
    for batch_idx, (x, target) in enumerate(loader):
        if not dev_env.type_xla:
            x, target = x.to(dev_env.device), target.to(dev_env.device)
        with dev_env.autocast():
            loss = loss_fn(model(x), target)
        optimizer.zero_grad()
        dev_env.backward(loss)
        dev_env.optimizer_step(optimizer)
        dev_env.mark_step()
        if batch_idx % args.log_interval == 0:
            reduced = dev_env.all_reduce(loss.detach())
            losses_m.update(reduced.item(), x.size(0))  # expect: XLA507
            _logger.info("Train: %d [%d] loss %.4f (%.4f)", epoch, batch_idx, losses_m.val, losses_m.avg)
    return losses_m.avg


def validate(model, loader, dev_env):
    top1_m = AverageMeter()
    model.eval()
    with torch.no_grad():
        for x, target in loader:
            if not dev_env.type_xla:
                x, target = x.to(dev_env.device), target.to(dev_env.device)
            top1_m.update(accuracy(model(x), target).item(), x.size(0))
    return top1_m.avg


def main(args):
    dev_env = initialize_device(amp=args.amp)
    random_seed(args.seed, dev_env.global_rank)
    model = create_model(args.num_classes)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * dev_env.world_size, momentum=0.9)  # expect: XLA405
    model = dev_env.to_device(model)
    model = dev_env.wrap_distributed(model)
    loss_fn = nn.CrossEntropyLoss().to(dev_env.device)

    train_tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    eval_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
    train_ds = datasets.ImageFolder(f"{args.data}/train", train_tf)
    eval_ds = datasets.ImageFolder(f"{args.data}/val", eval_tf)
    sampler = DistributedSampler(train_ds, num_replicas=dev_env.world_size, rank=dev_env.global_rank) if dev_env.world_size > 1 else None
    loader_train = DataLoader(train_ds, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler,
                              num_workers=args.workers, drop_last=True)
    loader_eval = DataLoader(eval_ds, batch_size=args.batch_size, num_workers=args.workers)
    if dev_env.type_xla:
        import torch_xla.distributed.parallel_loader as pl

        loader_train = pl.ParallelLoader(loader_train, [dev_env.device]).per_device_loader(dev_env.device)  # expect: XLA306
        loader_eval = pl.MpDeviceLoader(loader_eval, dev_env.device)

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train_loss = train_one_epoch(epoch, model, loader_train, optimizer, loss_fn, dev_env, args)
        top1 = validate(model, loader_eval, dev_env)
        if dev_env.global_rank == 0:
            _logger.info("epoch %d train_loss %.4f top1 %.2f", epoch, train_loss, top1)
        dev_env.save({"epoch": epoch, "state_dict": model.state_dict()}, f"{args.output}/last.pth")


def _mp_entry(index, args):
    main(args)


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--output", default="output")
    p.add_argument("--amp", action="store_true")
    for name, default in [("num_classes", 1000), ("batch_size", 128), ("epochs", 90), ("workers", 8),
                          ("log_interval", 50), ("seed", 42)]:
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--lr", type=float, default=0.1)
    return p.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())

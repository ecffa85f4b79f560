import argparse

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from engine import Engine
from engine.callbacks import Checkpoint, LossHistory, StepClosureLogger, WandbCallback
from engine.dist import world_info
from models import build_model


def train_fn(index, args):
    device = torch_xla.device()
    rank, world_size = world_info()
    tfm = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor()])
    ds = torchvision.datasets.CIFAR10(args.data, train=True, download=False, transform=tfm)
    sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, num_workers=4, drop_last=True)
    model = build_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)  # expect: XLA405
    model = model.to(device)
    callbacks = [WandbCallback(args.project), LossHistory(), StepClosureLogger(), Checkpoint(args.ckpt_dir)]
    engine = Engine(model, optimizer, pl.MpDeviceLoader(loader, device), callbacks)
    engine.fit(args.epochs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/data/cifar10")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--project", default="hookfit")
    parser.add_argument("--ckpt-dir", default="ckpt")
    torch_xla.launch(train_fn, args=(parser.parse_args(),))

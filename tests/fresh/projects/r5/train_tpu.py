"""Train SmallResNet on all TPU cores.

    PJRT_DEVICE=TPU python train_tpu.py --train train.npz --val val.npz
"""
import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from tpu_cls.data import NpzImages, build_loader
from tpu_cls.loop import TrainLoop, place_model
from tpu_cls.model import SmallResNet
from tpu_cls.plugins import BestCheckpoint, EarlyStopping, LossHistory, WandbPlugin


def _mp_fn(index, args):
    torch.manual_seed(args.seed)
    device = torch_xla.device()
    world, rank = xr.world_size(), xr.global_ordinal()

    train_loader = build_loader(NpzImages(args.train), args.batch_size, num_replicas=world, rank=rank, train=True)
    val_loader = build_loader(NpzImages(args.val), args.batch_size, num_replicas=world, rank=rank, train=False)

    model = SmallResNet(num_classes=args.num_classes)
    lr = args.lr * xm.xrt_world_size()  # expect: XLA801
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)  # expect: XLA405
    model = place_model(model, device)

    plugins = [
        LossHistory(args.out_dir),
        EarlyStopping(patience=args.patience),
        BestCheckpoint(args.out_dir),
        WandbPlugin("tpu-cls", vars(args)),
    ]
    loop = TrainLoop(model, optimizer, train_loader, val_loader, device, plugins=plugins, epochs=args.epochs)
    loop.fit()


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train", required=True)
    p.add_argument("--val", required=True)
    p.add_argument("--num-classes", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--patience", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-dir", default="runs/tpu_cls")
    return p.parse_args()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_args(),))

"""PJRT_DEVICE=TPU python train_tpu.py --data /data/cifar10_train.pt"""
import argparse
import os

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.distributed.xla_backend  # noqa: F401
from torch.nn.parallel import DistributedDataParallel as DDP

from common.ckpt import load_checkpoint, save_checkpoint
from common.data import device_loader, load_dataset, make_loader
from common.loop import train_epoch
from common.model import build_model
from common.utils import is_main, make_scaler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--num-classes", dest="num_classes", type=int, default=10)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--resume", default="")
    p.add_argument("--out-dir", dest="out_dir", default="ckpt")
    return p.parse_args()


def _mp_fn(index, args):
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    model = DDP(build_model(args.num_classes).to(device), gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * dist.get_world_size(), momentum=0.9, weight_decay=5e-4)
    scaler = make_scaler("xla")
    start_epoch = 0
    if args.resume:
        start_epoch = load_checkpoint(args.resume, model, optimizer)
    loader, sampler = make_loader(load_dataset(args.data), args.batch_size, dist.get_rank(), dist.get_world_size())
    train_loader = device_loader(loader, device)
    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)
        seen = train_epoch(model, optimizer, train_loader, device, epoch, scaler=scaler, amp_device="xla")
        if is_main():
            print(f"epoch {epoch}: {seen} samples on rank 0")
        save_checkpoint(model, optimizer, epoch, args.out_dir)


if __name__ == "__main__":
    os.environ.setdefault("PJRT_DEVICE", "TPU")
    torch_xla.launch(_mp_fn, args=(parse_args(),))

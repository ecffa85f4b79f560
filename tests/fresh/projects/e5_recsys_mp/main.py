"""Click-through-rate model (DLRM-style), data parallel on a TPU VM.

Ported from our GPU reference scripts (torchvision `references/` layout):

    python main.py --train-path /data/criteo/train.npz --world-size 4
"""
import argparse
import os

import torch
import torch.multiprocessing as mp
import torch_xla

import dist_utils
from data import ClickLogDataset, build_loader
from engine import evaluate, train_one_epoch
from model import DLRM
from utils import set_seed


def get_args_parser():
    p = argparse.ArgumentParser(description="DLRM training", add_help=True)
    p.add_argument("--train-path", required=True)
    p.add_argument("--val-path", default=None)
    p.add_argument("--output-dir", default="checkpoints")
    p.add_argument("--num-dense", type=int, default=13)
    p.add_argument("--cardinalities", type=int, nargs="+", default=[100000] * 26)
    p.add_argument("--embed-dim", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=2048)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--print-freq", type=int, default=100)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--world-size", type=int, default=4)
    p.add_argument("--master-addr", default="127.0.0.1")
    p.add_argument("--master-port", type=int, default=29500)
    return p


def main_worker(rank, args):
    dist_utils.init_distributed_mode(rank, args)
    set_seed(args.seed + rank)
    device = torch_xla.device()

    model = DLRM(args.num_dense, args.cardinalities, args.embed_dim).to(device)
    model = torch.nn.parallel.DistributedDataParallel(model, gradient_as_bucket_view=True)
    model_without_ddp = model.module
    optimizer = torch.optim.Adagrad(model.parameters(), lr=args.lr)

    train_loader, train_sampler = build_loader(ClickLogDataset(args.train_path), args.batch_size, device, train=True)
    val_loader = None
    if args.val_path:
        val_loader, _ = build_loader(ClickLogDataset(args.val_path), args.batch_size, device, train=False)

    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        stats = train_one_epoch(model, optimizer, train_loader, epoch, args.print_freq)
        if val_loader is not None:
            stats.update(evaluate(model, val_loader))
        checkpoint = {"model": model_without_ddp.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
        dist_utils.save_on_master(checkpoint, os.path.join(args.output_dir, f"model_{epoch}.pth"))
        if dist_utils.is_main_process():
            print(f"epoch {epoch}: " + ", ".join(f"{k}={v:.4f}" for k, v in stats.items()))


if __name__ == "__main__":
    args = get_args_parser().parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    mp.spawn(main_worker, args=(args,), nprocs=args.world_size)  # expect: XLA002

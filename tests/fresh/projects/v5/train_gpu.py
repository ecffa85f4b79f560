"""GPU entry point: torchrun --nproc_per_node=8 train_gpu.py --data /data/imdb-tok"""
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from common.ckpt import save_checkpoint
from common.data import build_loader
from common.engine import evaluate, train_epoch
from common.model import TinyTransformerClassifier
from common.utils import get_cuda_device, seed_all


def main(args):
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    seed_all(args.seed)
    device = get_cuda_device()
    train_loader = build_loader(args.data, "train", args.batch_size, world_size, rank)
    val_loader = build_loader(args.data, "test", args.batch_size, world_size, rank)
    model = DDP(TinyTransformerClassifier().cuda(), device_ids=[device.index])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        train_epoch(model, train_loader, optimizer, device, epoch, is_main=rank == 0)
        correct, count = evaluate(model, val_loader, device)
        dist.all_reduce(correct)
        dist.all_reduce(count)
        if rank == 0:
            print(f"epoch {epoch} val acc {(correct / count).item():.4f}")
            save_checkpoint(model.module, optimizer, epoch, args.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--out", default="/tmp/tinylm")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=17)
    main(p.parse_args())

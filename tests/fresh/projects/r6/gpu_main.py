"""GPU entry point.

    torchrun --nproc_per_node=8 gpu_main.py --data train.bin
"""
import argparse
import os

import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from common.cuda_utils import cleanup, get_device, setup_ddp
from common.loop import train_one_epoch
from common.utils import TokenFileDataset, build_scheduler, save_checkpoint, seed_everything
from models import TinyGPT


def main():
    args = parse_args()
    local_rank, rank, world_size = setup_ddp()
    seed_everything(args.seed)
    device = get_device(local_rank)

    dataset = TokenFileDataset(args.data, args.block_size)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=True, num_workers=4, pin_memory=True)

    model = TinyGPT(args.vocab_size, block_size=args.block_size, dropout=args.dropout).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    scheduler = build_scheduler(optimizer, args.warmup, args.epochs * len(loader))

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        mean_loss, step_time = train_one_epoch(model, loader, optimizer, scheduler, device)
        if rank == 0:
            print(f"epoch {epoch}: loss {mean_loss:.4f}, {step_time * 1e3:.1f} ms/step", flush=True)
            save_checkpoint(model, optimizer, epoch, os.path.join(args.out_dir, "ckpt.pt"))
    cleanup()


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--vocab-size", type=int, default=50304)
    p.add_argument("--block-size", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--out-dir", default="out")
    return p.parse_args()


if __name__ == "__main__":
    main()

import os

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from common.data import build_loader
from common.dist import cleanup, get_rank_and_world, init_distributed
from common.utils import seed_all
from model import CharRNN
from train_loop import train_one_epoch


def main(cfg):
    seed_all(cfg["seed"])
    rank, world = get_rank_and_world()
    local_rank = int(os.environ["LOCAL_RANK"])
    init_distributed("nccl", rank, world)
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    model = DDP(CharRNN(dropout=0.2).to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"] * world)
    loader, sampler = build_loader(cfg["data"], cfg["batch_size"], rank, world)
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, device, epoch, show=rank == 0)
        if rank == 0:
            torch.save(model.module.state_dict(), f"ckpt/gpu_epoch{epoch}.pt")
    torch.cuda.empty_cache()
    cleanup()

"""Throughput check on a GPU box with the CUDA strategy (no TPU involved)."""
import torch
import torch.nn as nn

from data import TokenBlocks, make_loader
from fabric.cuda import CUDAStrategy


def bench(rank, strategy, path):
    model = strategy.setup_module(nn.Sequential(nn.Embedding(32000, 256), nn.Linear(256, 32000)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = TokenBlocks(path, 128)
    loader = make_loader(ds, 32, sampler=strategy.distributed_sampler(ds))
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        strategy.optimizer_step(optimizer)
        optimizer.zero_grad()
        if rank == 0 and step % 20 == 0:
            print(f"step {step} loss {loss.item():.3f}")
        if step == 200:
            break
    if rank == 0:
        torch.save(model.module.state_dict(), "bench.pt")


if __name__ == "__main__":
    CUDAStrategy().launch(bench, "data/train.pt")

# remains: XLA002 XLA201
import torch
import torch.multiprocessing as mp
import torch_xla


def train(rank, loader, model, optimizer):
    for x in loader:
        model(x.to(torch_xla.device())).sum().backward()
        optimizer.step()


mp.spawn(train, args=(None, None, None), nprocs=8)

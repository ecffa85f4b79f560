# ResNet-ish CIFAR training with native XLA data parallel (xmp.spawn), written against an
# old tutorial. Aliased xla_model import.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torch_xla.core import xla_model as xm


class SmallConvNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 3, padding=1)
        self.c2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64 * 8 * 8, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.fc(x.flatten(1))


def _mp_fn(index, args):
    device = torch_xla.device()
    images = torch.randn(20000, 3, 32, 32)
    labels = torch.randint(0, 10, (20000,))
    ds = TensorDataset(images, labels)
    sampler = DistributedSampler(ds, num_replicas=xm.xrt_world_size(), rank=xr.global_ordinal(), shuffle=True)  # expect: XLA801
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    model = SmallConvNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * xr.world_size(), momentum=0.9)
    train_loader = pl.MpDeviceLoader(loader, device)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        running = 0.0
        for step, (x, y) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # expect: XLA203
            xm.optimizer_step(optimizer)
            running += loss.item()  # expect: XLA501
        xm.master_print(f"epoch {epoch} mean loss {running / (step + 1):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=10)
    xmp.spawn(_mp_fn, args=(parser.parse_args(),), nprocs=8)  # expect: XLA001

"""Port of a GPU script to a v3-8 (one process per core).

Reported: each core sees the whole dataset, the loss curves of the cores differ,
and training is ~20x slower than expected.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(128, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def _mp_fn(index):
    dist.init_process_group("gloo", rank=index, world_size=8)  # expect: XLA103
    device = torch_xla.device()
    data = torch.load("features.pt")
    ds = TensorDataset(data["x"], data["y"])
    sampler = DistributedSampler(ds, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal())  # expect: XLA801 XLA802
    loader = DataLoader(ds, batch_size=64, sampler=sampler)  # expect: XLA304
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:  # expect: XLA301
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()  # expect: XLA201
        xm.master_print(f"epoch {epoch} last loss {loss.item():.4f}")
    if xm.is_master_process():  # expect: XLA812
        print("done")


if __name__ == "__main__":
    os.environ["PJRT_DEVICE"] = "TPU"
    xmp.spawn(_mp_fn, args=())

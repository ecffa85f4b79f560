# Bug report: tensor-parallel MLP under SPMD, gradients of the first layer are None.
# The activation is annotated inline: `self.fc2(xs.mark_sharding(h, ...))` feeds the
# wrapper that mark_sharding returns into the next layer.
import numpy as np
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, TensorDataset

xr.use_spmd()
NUM_DEVICES = xr.global_runtime_device_count()
MESH = xs.Mesh(np.arange(NUM_DEVICES), (1, NUM_DEVICES), ("data", "model"))


class ShardedMLP(nn.Module):
    def __init__(self, dim=1024, hidden=4096):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.fc2(xs.mark_sharding(h, MESH, (None, "model")))  # expect: XLA909


def main():
    device = torch_xla.device()
    model = ShardedMLP().to(device)
    xs.mark_sharding(model.fc1.weight, MESH, ("model", None))
    xs.mark_sharding(model.fc2.weight, MESH, (None, "model"))
    annotated = xs.mark_sharding(model.fc1.bias, MESH, ("model",))
    print("fc1.bias sharding:", annotated.sharding_spec)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = torch.randn(4096, 1024)
    loader = DataLoader(TensorDataset(data, data.roll(1, dims=1)), batch_size=64, drop_last=True)
    for x, y in pl.MpDeviceLoader(loader, device):
        optimizer.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()

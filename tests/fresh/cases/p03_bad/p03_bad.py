# Bug report: "loss does not go down under SPMD data parallel". The batch is annotated
# with `x = xs.mark_sharding(x, ...)`, which rebinds x to the XLAShardedTensor wrapper
# that mark_sharding returns; the forward then runs on the wrapper, not on the tensor.
import numpy as np
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, TensorDataset

xr.use_spmd()


def build_mesh():
    n = xr.global_runtime_device_count()
    return xs.Mesh(np.arange(n), (n,), ("data",))


def train(epochs=5):
    device = torch_xla.device()
    mesh = build_mesh()
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    features = torch.randn(8192, 128)
    ds = TensorDataset(features, features.sum(1, keepdim=True))
    loader = DataLoader(ds, batch_size=256, shuffle=True, drop_last=True)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            x = xs.mark_sharding(x, mesh, ("data", None))  # expect: XLA909
            xs.mark_sharding(y, mesh, ("data", None))
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            torch_xla.sync()
        print("epoch", epoch, "loss", loss.item())


if __name__ == "__main__":
    train()

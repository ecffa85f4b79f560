# An SPMD tensor-parallel experiment that was also put under torch_xla.launch "to use all
# chips", plus an old sharding import.
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch_xla
import torch_xla.experimental.xla_sharding as xs  # expect: XLA807
import torch_xla.runtime as xr


class TPBlock(nn.Module):
    def __init__(self, d=2048, h=8192):
        super().__init__()
        self.up = nn.Linear(d, h)
        self.down = nn.Linear(h, d)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def run(index):
    dist.init_process_group("xla", init_method="xla://")  # expect: XLA107
    num_devices = xr.world_size()  # expect: XLA902
    mesh = xs.Mesh(np.arange(num_devices), (1, num_devices), ("data", "model"))
    model = TPBlock()
    xs.mark_sharding(model.up.weight, mesh, ("model", None))  # expect: XLA905
    device = torch_xla.device()
    model = model.to(device)
    xs.mark_sharding(model.down.weight, mesh, (None, "model"))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(100):
        x = torch.randn(32, 2048).to(device)
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        torch_xla.sync()


if __name__ == "__main__":
    xr.use_spmd()
    torch_xla.launch(run)  # expect: XLA004

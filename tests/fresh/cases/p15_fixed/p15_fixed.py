"""SPMD fine-tune, fixed: SPMD is switched on before anything touches the runtime."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch_xla.manual_seed(seed)


def build_mesh():
    n = xr.global_runtime_device_count()
    return xs.Mesh(np.arange(n), (n, 1), ("data", "model"))


def main():
    xr.use_spmd()
    set_seed(1234)
    mesh = build_mesh()
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Dropout(0.1), nn.Linear(2048, 512)).to(device)
    xs.mark_sharding(model[0].weight, mesh, ("model", "data"))
    xs.mark_sharding(model[3].weight, mesh, ("data", "model"))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(1000):
        x = torch.randn(64, 512, device=device)
        xs.mark_sharding(x, mesh, ("data", None))
        loss = F.mse_loss(model(x), x)
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()


if __name__ == "__main__":
    main()

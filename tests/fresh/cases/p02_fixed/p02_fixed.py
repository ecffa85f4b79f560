# Fixed: forward returns a tuple led by the logits tensor, which FSDPv2's default
# output sharding handles; no dataclass output any more.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2


class MoEClassifier(nn.Module):
    def __init__(self, dim=256, experts=4, classes=16):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.experts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(experts))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        gates = self.router(x).softmax(-1)
        mixed = sum(gates[:, i : i + 1] * e(x) for i, e in enumerate(self.experts))
        aux = (gates.mean(0) ** 2).sum() * gates.shape[-1]
        return self.head(mixed), aux


def train(steps=200):
    xr.use_spmd()
    num_devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(num_devices), (num_devices, 1), ("fsdp", "tensor"))
    device = torch_xla.device()
    model = FSDPv2(MoEClassifier().to(device), mesh=mesh)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    w_true = torch.randn(256, 16, device=device)
    for step in range(steps):
        x = torch.randn(64, 256, device=device)
        xs.mark_sharding(x, mesh, ("fsdp", None))
        y = (x @ w_true).argmax(-1)
        optimizer.zero_grad()
        logits, aux_loss = model(x)
        loss = F.cross_entropy(logits, y) + 0.01 * aux_loss
        loss.backward()
        optimizer.step()
        torch_xla.sync()
    return model


if __name__ == "__main__":
    train()

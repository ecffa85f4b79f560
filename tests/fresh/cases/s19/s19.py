"""FSDPv2 (SPMD) fine-tuning of two heads on a v4-8.

Reported: RuntimeError: The output type is not supported: <class 'dict'>.
"""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2


class Backbone(nn.Module):
    def __init__(self, dim=1024, depth=4):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Sequential(nn.Linear(dim, dim), nn.GELU()) for _ in range(depth)])

    def forward(self, x):
        return self.layers(x)


class Classifier(nn.Module):
    def __init__(self, dim=1024, classes=100):
        super().__init__()
        self.body = Backbone(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x, labels=None):
        logits = self.head(self.body(x))
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = F.cross_entropy(logits, labels)
        return out


@dataclass
class RegressionOutput:
    pred: torch.Tensor
    loss: torch.Tensor


class Regressor(nn.Module):
    def __init__(self, dim=1024):
        super().__init__()
        self.body = Backbone(dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, x, target):
        pred = self.out(self.body(x)).squeeze(-1)
        return RegressionOutput(pred=pred, loss=F.mse_loss(pred, target))


class Ranker(nn.Module):
    def __init__(self, dim=1024):
        super().__init__()
        self.body = Backbone(dim)
        self.score = nn.Linear(dim, 1)

    def forward(self, x):
        s = self.score(self.body(x)).squeeze(-1)
        return s, s.detach().std()


def shard_logits(output, mesh):
    xs.mark_sharding(output["logits"], mesh, ("fsdp", None))


def train(model, make_batch, steps, mesh):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        x, y = make_batch()
        xs.mark_sharding(x, mesh, ("fsdp", None))
        out = model(x, y)
        loss = out["loss"] if isinstance(out, dict) else out.loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()


def main():
    xr.use_spmd()
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
    device = torch_xla.device()

    def cls_batch():
        return torch.randn(64, 1024, device=device), torch.randint(0, 100, (64,), device=device)

    def reg_batch():
        return torch.randn(64, 1024, device=device), torch.randn(64, device=device)

    clf = FSDPv2(Classifier().to(device), mesh=mesh)  # expect: XLA908
    train(clf, cls_batch, 100, mesh)

    clf_ok = FSDPv2(Classifier().to(device), mesh=mesh, shard_output=shard_logits)
    train(clf_ok, cls_batch, 100, mesh)

    reg = FSDPv2(Regressor().to(device), mesh=mesh)  # expect: XLA908
    train(reg, reg_batch, 100, mesh)

    ranker = FSDPv2(Ranker().to(device), mesh=mesh)
    scores, spread = ranker(torch.randn(8, 1024, device=device))
    torch_xla.sync()
    print(scores.cpu(), spread.cpu())


if __name__ == "__main__":
    main()

"""SPMD pre-training loop with distributed checkpoints and step timing.

Reported: every 500 steps the job stalls for minutes while saving; step times
printed by the script look far better than the profiler says.
"""
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.spmd as xs
import torch_xla.experimental.distributed_checkpoint as xc
import torch_xla.runtime as xr
from torch_xla.experimental.distributed_checkpoint import CheckpointManager


class MLPStack(nn.Module):
    def __init__(self, dim=2048, depth=8):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for layer in self.layers:
            x = F.gelu(layer(x))
        return x


def batches(device, n, dim=2048, bs=256):
    for _ in range(n):
        yield torch.randn(bs, dim, device=device), torch.randn(bs, dim, device=device)


def pretrain(model, opt, mesh, device, steps):
    for step, (x, y) in enumerate(batches(device, steps)):
        xs.mark_sharding(x, mesh, ("fsdp", None))
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if step % 500 == 0:
            state = {"model": model.state_dict(), "optim": opt.state_dict()}
            dist_cp.save(  # expect: XLA605
                state_dict=state,
                storage_writer=dist_cp.FileSystemWriter(f"/ckpt/pretrain/{step}"),
                planner=xc.SPMDSavePlanner(),
            )
        torch_xla.sync()
        if step % 100 == 0:
            xm.add_step_closure(lambda s, l: print(f"step {s} loss {l.item():.4f}"), args=(step, loss))


def benchmark(model, opt, mesh, device, steps=20):
    times = []
    for x, y in batches(device, steps):
        xs.mark_sharding(x, mesh, ("fsdp", None))
        t0 = time.perf_counter()
        F.mse_loss(model(x), y).backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()
        times.append(time.perf_counter() - t0)  # expect: XLA504
    return times


def finetune(model, opt, mesh, device, steps):
    mgr = CheckpointManager("/ckpt/finetune", save_interval=200)
    for step, (x, y) in enumerate(batches(device, steps)):
        xs.mark_sharding(x, mesh, ("fsdp", None))
        t0 = time.perf_counter()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync(wait=True)
        step_time = time.perf_counter() - t0
        mgr.save_async(step, {"model": model.state_dict()})
        if step % 500 == 0:
            dist_cp.save(
                state_dict={"model": model.state_dict()},
                storage_writer=dist_cp.FileSystemWriter(f"/ckpt/finetune_full/{step}"),
                planner=xc.SPMDSavePlanner(),
            )
            xm.master_print(f"step {step}: {step_time * 1e3:.1f} ms")


def main():
    xr.use_spmd()
    dist.init_process_group("gloo", init_method="xla://")
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
    device = torch_xla.device()
    model = MLPStack().to(device)
    for layer in model.layers:
        xs.mark_sharding(layer.weight, mesh, ("fsdp", "model"))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    print(sorted(benchmark(model, opt, mesh, device))[10])
    pretrain(model, opt, mesh, device, 5000)
    finetune(model, opt, mesh, device, 1000)


if __name__ == "__main__":
    main()

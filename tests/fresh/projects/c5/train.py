"""SPMD pre-training: python train.py (one process per TPU host)."""
import time

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

import ckpt
from config import TrainConfig, set_seed
from data import make_loader
from model import Transformer, count_parameters
from sharding import batch_sharding, build_mesh, shard_transformer


def log_step(step, loss, elapsed):
    print(f"step {step:6d}  loss {loss.item():.4f}  {elapsed:.1f}s")


def main():
    cfg = TrainConfig()
    set_seed(cfg.seed)
    xr.use_spmd()  # expect: XLA906
    device = torch_xla.device()
    mesh = build_mesh(cfg.model_parallel)

    model = Transformer(cfg).to(device)
    model.tie_weights()
    shard_transformer(model, mesh)
    print(f"parameters: {count_parameters(model) / 1e6:.1f}M")
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95), weight_decay=0.1)
    loader = pl.MpDeviceLoader(make_loader(cfg), device, input_sharding=batch_sharding(mesh))
    ckpt.init_checkpointing()

    model.train()
    t_start = time.perf_counter()
    for step, batch in enumerate(loader):
        ids = batch["input_ids"]
        with torch.autocast("xla", dtype=torch.bfloat16):
            logits = model(ids[:, :-1], batch["attention_mask"][:, :-1])
            loss = F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        xm.mark_step()  # expect: XLA805
        if step % cfg.log_every == 0:
            elapsed = time.perf_counter() - t_start  # expect: XLA504
            xm.add_step_closure(log_step, args=(step, loss, elapsed))
        if step + 1 >= cfg.steps:
            break
    torch_xla.sync(wait=True)
    total = time.perf_counter() - t_start
    print(f"{cfg.steps} steps in {total:.0f}s")
    ckpt.save(model, cfg.steps, cfg.ckpt_dir)


if __name__ == "__main__":
    main()

"""Run the same command on every host of the slice: python train.py"""
import random
import time

import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from llm import TinyLM, TrainConfig
from llm.checkpointing import make_checkpoint_manager, maybe_save
from llm.data import build_loader
from llm.sharding import setup_spmd, shard_model


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch_xla.manual_seed(seed)


def report(step, loss):
    print(f"step {step:6d} | loss {loss.item():.4f}", flush=True)


def main(cfg):
    xr.initialize_cache(cfg.cache_dir, readonly=False)
    seed_everything(cfg.seed)
    mesh = setup_spmd(cfg)
    device = torch_xla.device()
    model = TinyLM(cfg).to(device)
    shard_model(model, mesh)
    model = torch.compile(model)  # expect: XLA403
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.1)
    loader = build_loader(cfg, mesh, device)
    manager = make_checkpoint_manager(cfg)

    model.train()
    t_start = time.perf_counter()
    for step, batch in enumerate(loader):
        if step >= cfg.max_steps:
            break
        optimizer.zero_grad()
        loss = model(batch["input_ids"], labels=batch["labels"])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
        optimizer.step()
        if step == 0:
            first_step_secs = time.perf_counter() - t_start  # expect: XLA504
            xm.master_print(f"first step (trace + compile) took {first_step_secs:.1f}s")
        if step % cfg.log_every == 0:
            xm.add_step_closure(report, args=(step, loss))
        maybe_save(manager, step, model, optimizer)


if __name__ == "__main__":
    main(TrainConfig())

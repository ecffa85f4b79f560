"""Pre-train TinyLM on a TPU VM from a structured config.

    python train.py optim.lr=6e-4 data.batch_size=32 epochs=2
"""
import os
import sys

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from conf import load_config
from data import TokenDataset, batch_stream
from instantiate import instantiate
from logging_utils import MetricLogger
from seeding import seed_all
from step_ctx import StepContext


def run(index, cfg):
    seed_all(cfg.seed)
    device = torch_xla.device()
    model = instantiate(cfg.model).to(device)
    optimizer = instantiate(cfg.optim, model.parameters())
    dataset = TokenDataset(cfg.data.path, cfg.data.seq_len)
    logger = MetricLogger(cfg.out_dir, every=cfg.log_every, rank=xr.global_ordinal())

    step = 0
    model.train()
    for epoch in range(cfg.epochs):
        for inputs, targets in batch_stream(dataset, cfg.data.batch_size, epoch, cfg.data.workers):
            with StepContext(step) as ctx:
                inputs, targets = inputs.to(device), targets.to(device)
                loss = model(inputs, targets)
                loss.backward()
                xm.optimizer_step(optimizer)
                optimizer.zero_grad(set_to_none=True)
                logger.log_scalar("train/loss", loss.detach(), step)
            logger.log_scalar("perf/step_seconds", ctx.elapsed, step)
            step += 1
        xm.master_print(f"epoch {epoch} finished after {step} steps")
    xm.save(model.state_dict(), os.path.join(cfg.out_dir, "final.pt"))


def main(argv):
    cfg = load_config(argv)
    os.makedirs(cfg.out_dir, exist_ok=True)
    if cfg.precision == "bf16":
        os.environ["XLA_USE_BF16"] = "1"  # expect: XLA705
    torch_xla.launch(run, args=(cfg,))


if __name__ == "__main__":
    main(sys.argv[1:])

"""SPMD pre-training entry point (run the same command on every host).

    PJRT_DEVICE=TPU python scripts/train_spmd.py --data tokens.pt
"""
import argparse
import time

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from lmtrain import ModelArgs, Transformer, batch_sharding, build_mesh, make_loader, setup_logging, shard_params
from lmtrain import checkpoint


def log_step(logger, step, loss, step_time):
    logger.info("step %d loss %.4f (%.1f ms)", step, loss.item(), step_time * 1000)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--global-batch-size", type=int, default=64)
    p.add_argument("--model-parallel", type=int, default=4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--ckpt-dir", default="/tmp/lm_ckpt")
    return p.parse_args()


def main():
    args = parse_args()
    logger = setup_logging()
    xr.use_spmd()  # expect: XLA906
    torch.manual_seed(args.seed)
    torch_xla.manual_seed(args.seed)

    device = torch_xla.device()
    mesh = build_mesh(args.model_parallel)
    model = Transformer(ModelArgs()).to(device)
    shard_params(model, mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)

    loader = make_loader(args.data, args.seq_len, args.global_batch_size)
    train_loader = pl.MpDeviceLoader(loader, device, input_sharding=batch_sharding(mesh))
    checkpoint.init_cpu_group()

    step = 0
    for epoch in range(args.epochs):
        for tokens, targets in train_loader:
            t0 = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            _, loss = model(tokens, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step_time = time.perf_counter() - t0  # expect: XLA504
            if step % args.log_every == 0:
                xm.add_step_closure(log_step, args=(logger, step, loss, step_time))
            step += 1
        checkpoint.save(model, step, args.ckpt_dir)
        logger.info("epoch %d done at step %d", epoch, step)


if __name__ == "__main__":
    main()

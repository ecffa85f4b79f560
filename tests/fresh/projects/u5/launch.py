"""Pod run: start this on every host of the slice; torch_xla starts one process per local chip.

    python launch.py --data gs://bucket/rows.pt --ckpt-dir /mnt/ckpt --cache-dir /mnt/xla_cache
"""
import argparse
import os
import time

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DistributedSampler

from ckpt import export_weights, latest_checkpoint, load_checkpoint, save_checkpoint
from data import FeatureRows, make_loader
from model import Regressor
from step import train_step


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--ckpt-dir", required=True)
    ap.add_argument("--cache-dir", default="/tmp/xla_cache")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--accum", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def report(step, loss, step_time):
    print(f"step {step} loss {loss.item():.5f} {step_time * 1e3:.1f} ms/step", flush=True)


def _mp_fn(index, args):
    xr.initialize_cache(args.cache_dir)  # expect: XLA901
    torch.manual_seed(args.seed)  # expect: XLA206
    device = torch_xla.device()
    ds = FeatureRows(args.data)
    model = Regressor(ds.x.size(1), out_dim=ds.y.size(1)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr * xr.world_size())
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.8)
    step = 0
    resume = latest_checkpoint(args.ckpt_dir)
    if resume:
        step = load_checkpoint(resume, model, opt, sched)
    xm.broadcast_master_param(model)

    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    loader = pl.MpDeviceLoader(make_loader(ds, args.batch_size, sampler=sampler), device)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for batch in loader:
            t0 = time.perf_counter()
            loss = train_step(model, batch, opt, accum_steps=args.accum)
            step_time = time.perf_counter() - t0  # expect: XLA504
            step += 1
            if step % args.log_every == 0:
                xm.add_step_closure(report, args=(step, loss, step_time))
        sched.step()
        if xr.global_ordinal() == 0:
            save_checkpoint(os.path.join(args.ckpt_dir, f"step_{step:08d}.pt"), model, opt, step, sched)  # expect: XLA602
        xm.rendezvous(f"epoch-{epoch}")
    if xm.is_master_ordinal(local=False):
        export_weights(model, os.path.join(args.ckpt_dir, "final_weights.pt"))


if __name__ == "__main__":
    os.environ.setdefault("PJRT_DEVICE", "TPU")
    torch_xla.launch(_mp_fn, args=(parse_args(),))

"""Single-device debug run: one process, one chip (or PJRT_DEVICE=CPU on a laptop). No launcher.

    PJRT_DEVICE=TPU python debug.py --data /data/rows_small.pt --limit 4096
"""
import argparse
import time

import torch
import torch_xla
import torch_xla.runtime as xr

from ckpt import save_checkpoint
from data import FeatureRows, make_loader
from model import Regressor
from step import train_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit", type=int, default=4096)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--accum", type=int, default=2)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="/tmp/debug_ckpt.pt")
    args = ap.parse_args()

    xr.initialize_cache("/tmp/xla_cache_debug")
    torch.manual_seed(0)
    torch_xla.manual_seed(0)
    device = torch_xla.device()
    ds = FeatureRows(args.data, limit=args.limit)
    model = Regressor(ds.x.size(1), out_dim=ds.y.size(1)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loader = make_loader(ds, args.batch_size, shuffle=True, workers=0)

    model.train()
    for i, (x, y) in enumerate(loader):
        t0 = time.perf_counter()
        loss = train_step(model, (x.to(device), y.to(device)), opt, accum_steps=args.accum)
        torch_xla.sync(wait=True)
        dt = time.perf_counter() - t0
        print(f"step {i:4d} loss {loss.item():.5f} {dt * 1e3:7.1f} ms", flush=True)
    save_checkpoint(args.out, model, opt, step=len(loader))


if __name__ == "__main__":
    main()

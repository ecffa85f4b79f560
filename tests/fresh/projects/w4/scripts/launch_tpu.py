"""PJRT_DEVICE=TPU python scripts/launch_tpu.py --data-root /mnt/disks/celeba"""
import argparse
import functools
import os

import torch_xla

from gantpu import train_worker


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--data-root", dest="data_root", required=True)
    p.add_argument("--out-dir", dest="out_dir", default="runs/dcgan")
    p.add_argument("--nz", type=int, default=128)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


if __name__ == "__main__":
    cfg = parse()
    os.makedirs(cfg.out_dir, exist_ok=True)
    torch_xla.launch(functools.partial(train_worker, cfg=cfg))

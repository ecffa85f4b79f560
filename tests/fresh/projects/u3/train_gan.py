"""DCGAN on TPU, one process per chip.

    python train_gan.py --data /data/celeba --out runs/celeba64 --epochs 25
"""
import argparse
import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from gan.data import build_preview_loader, build_train_loader
from gan.io import export_generator, save_grid
from gan.loop import train_epoch
from gan.nets import Discriminator, Generator


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default="runs/dcgan")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--z-dim", type=int, default=128)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--r1-gamma", type=float, default=0.2)
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    return ap.parse_args()


def _mp_fn(index, cfg):
    torch.manual_seed(cfg.seed)  # expect: XLA206
    device = torch_xla.device()
    netG = Generator(cfg.z_dim, cfg.width).to(device)
    netD = Discriminator(cfg.width).to(device)
    xm.broadcast_master_param(netG)
    xm.broadcast_master_param(netD)
    opt_g = torch.optim.Adam(netG.parameters(), lr=cfg.lr, betas=(0.0, 0.99))
    opt_d = torch.optim.Adam(netD.parameters(), lr=cfg.lr, betas=(0.0, 0.99))
    loader = pl.MpDeviceLoader(build_train_loader(cfg.data, cfg.size, cfg.batch_size), device)

    fixed_z = torch.randn(64, cfg.z_dim).to(device)
    is_first = xr.global_ordinal() == 0
    if is_first:
        os.makedirs(cfg.out, exist_ok=True)
        reals, _ = next(iter(build_preview_loader(cfg.data, cfg.size)))
        save_grid(reals, os.path.join(cfg.out, "reals.png"))

    for epoch in range(cfg.epochs):
        train_epoch(netG, netD, opt_g, opt_d, loader, cfg, device, epoch)
        netG.eval()
        with torch.no_grad():
            samples = netG(fixed_z)
        if is_first:
            save_grid(samples, os.path.join(cfg.out, f"samples_{epoch:03d}.png"))
        xm.rendezvous(f"epoch-{epoch}")
    export_generator(netG, os.path.join(cfg.out, "generator.pt"))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_args(),))

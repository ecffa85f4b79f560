"""Sample a grid from an exported generator, on any machine (CPU).

    python sample_cpu.py --ckpt runs/celeba64/generator.pt --out grid.png
"""
import argparse

import torch

from gan.io import load_generator, save_grid
from gan.nets import Generator


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--out", default="grid.png")
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--z-dim", type=int, default=128)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    netG = load_generator(Generator(args.z_dim, args.width), args.ckpt).eval()
    torch.manual_seed(args.seed)
    with torch.no_grad():
        images = netG(torch.randn(args.n, args.z_dim))
    save_grid(images, args.out)
    torch.save({"z_dim": args.z_dim, "state": netG.state_dict()}, args.out + ".pt")


if __name__ == "__main__":
    main()

"""Smoke test exported from a Colab notebook; run on a TPU VM as `python s17.py`.

Reported: RuntimeError: PyTorch is not linked with support for xla devices
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def build(dim, classes):
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, classes))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    model = build(args.dim, 10).to("xla")  # expect: XLA406
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, args.dim, device="xla")  # expect: XLA406
    y = torch.randint(0, 10, (64,)).to("xla:0")  # expect: XLA406

    start = time.time()
    for _ in range(args.steps):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    on_xla = x.device.type == "xla"
    print(f"{args.steps} steps in {time.time() - start:.2f}s (xla: {on_xla})")


if __name__ == "__main__":
    main()

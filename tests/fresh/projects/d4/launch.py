"""Entry point for both machines.

    torchrun --nproc-per-node 8 launch.py --data /data/cifar10      # GPU box
    ACCELERATOR=tpu python launch.py --data /data/cifar10           # TPU VM
"""
import argparse
import os

from dualrun.backends import get_backend
from dualrun.engine import train


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/cifar10")
    p.add_argument("--out", default="out/dualrun")
    p.add_argument("--epochs", type=int, default=24)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.4)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--log-every", dest="log_every", type=int, default=50)
    p.add_argument("--eval-every", dest="eval_every", type=int, default=4)
    p.add_argument("--compile", action="store_true")
    return p.parse_args()


def _xla_worker(index, cfg):
    train(get_backend("tpu", index=index), cfg)


def main():
    cfg = parse()
    os.makedirs(cfg.out, exist_ok=True)
    accelerator = os.environ.get("ACCELERATOR", "tpu" if os.path.exists("/dev/accel0") else "cuda")
    if accelerator == "tpu":
        import torch_xla

        torch_xla.launch(_xla_worker, args=(cfg,))
    else:
        train(get_backend("cuda"), cfg)


if __name__ == "__main__":
    main()

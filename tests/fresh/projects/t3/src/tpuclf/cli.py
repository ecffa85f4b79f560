import argparse

import torch_xla

from .train import run_worker
from .utils import describe_topology


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="tpuclf-train")
    p.add_argument("--data-dir", dest="data_dir", required=True)
    p.add_argument("--arch", default="resnet18")
    p.add_argument("--num-classes", dest="num_classes", type=int, default=1000)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=90)
    p.add_argument("--log-every", dest="log_every", type=int, default=100)
    p.add_argument("--resume", default="")
    p.add_argument("--out-dir", dest="out_dir", default="checkpoints")
    return p.parse_args(argv)


def main(argv=None):
    cfg = parse_args(argv)
    describe_topology()  # expect: XLA003
    torch_xla.launch(run_worker, args=(cfg,))


if __name__ == "__main__":
    main()

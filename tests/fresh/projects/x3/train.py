"""torchrun --nproc-per-node 8 train.py          (GPU)
PJRT_DEVICE=TPU python train.py                   (TPU VM)"""
import argparse
import os

import device_utils
from engine import train


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", dest="data_dir", default="data/cifar10")
    p.add_argument("--num-classes", dest="num_classes", type=int, default=10)
    p.add_argument("--global-batch", dest="global_batch", type=int, default=1024)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--log-every", dest="log_every", type=int, default=100)
    return p.parse_args()


def _mp_fn(index, cfg):
    train(cfg)


def main():
    cfg = parse_args()
    if device_utils.USE_TPU:
        import torch_xla

        os.environ["XLA_USE_BF16"] = "1"  # expect: XLA705
        torch_xla.launch(_mp_fn, args=(cfg,))
    else:
        import torch.distributed as dist

        dist.init_process_group("nccl")
        train(cfg)


if __name__ == "__main__":
    main()

"""GPU:  torchrun --nproc-per-node 8 launch.py --device cuda
TPU:  python launch.py --device tpu"""
import argparse
import os

from engine import train
from envs import get_env


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--device", choices=["cuda", "tpu"], default="cuda")
    p.add_argument("--num-classes", dest="num_classes", type=int, default=1000)
    p.add_argument("--num-samples", dest="num_samples", type=int, default=128_000)
    p.add_argument("--image-size", dest="image_size", type=int, default=224)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--log-every", dest="log_every", type=int, default=100)
    p.add_argument("--master-port", dest="master_port", type=int, default=12355)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--out-dir", dest="out_dir", default="checkpoints")
    return p.parse_args()


def main():
    cfg = parse_args()
    os.makedirs(cfg.out_dir, exist_ok=True)
    env = get_env(cfg)
    env.run(train, cfg)


if __name__ == "__main__":
    main()

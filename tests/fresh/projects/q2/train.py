"""DeepFM on click logs.

    torchrun --nproc-per-node 8 train.py --backend cuda ...     (GPU box)
    python train.py --backend tpu ...                            (TPU VM)
    python train.py --backend cpu --epochs 1 ...                 (smoke test)
"""
import argparse

from accel import get_backend
from engine import worker

CRITEO_CARDINALITIES = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
                        27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", choices=["cpu", "cuda", "tpu"], default="tpu")
    ap.add_argument("--train-path", default="data/train.npz")
    ap.add_argument("--val-path", default="data/val.npz")
    ap.add_argument("--out-dir", default="out/deepfm")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--embed-dim", type=int, default=16)
    ap.add_argument("--log-every", type=int, default=200)
    cfg = ap.parse_args()
    cfg.num_dense = 13
    cfg.cardinalities = [min(c, 1_000_000) for c in CRITEO_CARDINALITIES]
    return cfg


def main():
    cfg = parse_args()
    backend = get_backend(cfg.backend)
    backend.launch(worker, args=(cfg,))


if __name__ == "__main__":
    main()

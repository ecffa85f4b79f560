"""CIFAR-10 with minilit on a TPU VM, one process per chip.

    python train_tpu.py --epochs 30 --ckpt-dir /tmp/ckpt
"""
import argparse
import os

import torch_xla
import torch_xla.runtime as xr

from classifier import ImageClassifier
from datamodule import CIFAR10DataModule
from minilit import Trainer, seed_everything
from minilit.xla import XLAStrategy


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ckpt-dir", default=None)
    ap.add_argument("--cache-dir", default="/tmp/xla_compile_cache")
    return ap.parse_args()


def _mp_fn(index, args):
    xr.initialize_cache(args.cache_dir, readonly=False)  # expect: XLA901
    seed_everything(args.seed)
    model = ImageClassifier(lr=args.lr)
    dm = CIFAR10DataModule(batch_size=args.batch_size)
    trainer = Trainer(XLAStrategy(), max_epochs=args.epochs, ckpt_path=args.ckpt_dir)
    trainer.fit(model, dm)


if __name__ == "__main__":
    os.environ.setdefault("PJRT_DEVICE", "TPU")
    args = parse_args()
    torch_xla.launch(_mp_fn, args=(args,))

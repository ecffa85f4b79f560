"""PJRT_DEVICE=TPU python launch.py --data-root /mnt/disks/imagenet --bucket my-ckpts"""
import argparse

import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

from classifier import TPUClassifier
from data import build_datasets, build_model


def _mp_fn(index, cfg, model, train_set, val_set):
    task = TPUClassifier(model, train_set, val_set, cfg)
    task.gcs_bucket = cfg.bucket
    task.fit(cfg.epochs)
    if xr.global_ordinal() == 0:
        task.export_weights(cfg.export_path)


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--data-root", dest="data_root", required=True)
    p.add_argument("--bucket", default=None)
    p.add_argument("--export-path", dest="export_path", default="resnet50_cpu.pt")
    p.add_argument("--num-classes", dest="num_classes", type=int, default=1000)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--max-norm", dest="max_norm", type=float, default=5.0)
    p.add_argument("--epochs", type=int, default=90)
    return p.parse_args()


if __name__ == "__main__":
    cfg = parse()
    train_set, val_set = build_datasets(cfg.data_root)
    model = build_model(cfg.num_classes)
    xmp.spawn(_mp_fn, args=(cfg, model, train_set, val_set), nprocs=8)  # expect: XLA001

"""Train any registered model with any registered trainer on a TPU VM.

    python train_tpu.py --model mixer --trainer classification --data-dir /mnt/imagenet
    python train_tpu.py --model resnet18 --trainer distill --teacher resnet50
"""
import argparse
import os

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

from zoo import tasks  # noqa: F401  (registers the trainers)
from zoo.checkpoint import export_for_inference
from zoo.data import build_train_loader, build_val_loader
from zoo.models import MODELS, count_parameters
from zoo.registry import TRAINERS


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=sorted(MODELS), default="mixer")
    ap.add_argument("--trainer", choices=sorted(TRAINERS), default="classification")
    ap.add_argument("--teacher", choices=sorted(MODELS), default="resnet50")
    ap.add_argument("--data-dir", dest="data_dir", default="/mnt/disks/imagenet")
    ap.add_argument("--out-dir", dest="out_dir", default="runs/zoo")
    ap.add_argument("--num-classes", dest="num_classes", type=int, default=1000)
    ap.add_argument("--image-size", dest="image_size", type=int, default=224)
    ap.add_argument("--keep-ratio", dest="keep_ratio", type=float, default=0.75)
    ap.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    ap.add_argument("--eval-batch-size", dest="eval_batch_size", type=int, default=256)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=90)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", dest="weight_decay", type=float, default=0.05)
    ap.add_argument("--clip-norm", dest="clip_norm", type=float, default=1.0)
    ap.add_argument("--label-smoothing", dest="label_smoothing", type=float, default=0.1)
    ap.add_argument("--temperature", type=float, default=2.0)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-cores", dest="num_cores", type=int, default=8)
    return ap.parse_args()


def _mp_fn(index, cfg):
    torch.manual_seed(cfg.seed)
    torch_xla.manual_seed(cfg.seed)
    model = MODELS[cfg.model](cfg)
    xm.master_print(f"{cfg.model}: {count_parameters(model) / 1e6:.1f}M parameters")
    trainer = TRAINERS[cfg.trainer](model, cfg)
    train_loader = build_train_loader(cfg)
    val_loader = build_val_loader(cfg, xr.world_size(), xr.global_ordinal())
    best = 0.0
    for epoch in range(cfg.epochs):
        trainer.train_epoch(train_loader, epoch)
        acc = trainer.evaluate(val_loader)
        xm.master_print(f"epoch {epoch}: val acc {acc:.4f}")
        trainer.save(os.path.join(cfg.out_dir, "last.pt"))
        best = max(best, acc)
    export_for_inference(trainer.model, os.path.join(cfg.out_dir, "weights.pt"), xr.global_ordinal() == 0)
    xm.master_print(f"best val acc {best:.4f}")


if __name__ == "__main__":
    args = parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    xmp.spawn(_mp_fn, args=(args,), nprocs=args.num_cores, start_method="fork")  # expect: XLA001

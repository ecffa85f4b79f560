"""timm-style training script for one accelerator.

    python train.py /data/imagenet-tensors --model resnet_s --device xla
    python train.py /data/imagenet-tensors --model resnet_s --device cuda
"""
import argparse
import logging
import os

import torch
import torch.nn as nn

from checkpoint_saver import CheckpointSaver
from engine import train_one_epoch, validate
from loader import TensorFolder, create_loader
from models import create_model
from utils import ModelEmaV2, random_seed

_logger = logging.getLogger("train")

parser = argparse.ArgumentParser(description="Image classification training")
parser.add_argument("data_dir")
parser.add_argument("--model", default="resnet_s")
parser.add_argument("--num-classes", type=int, default=1000)
parser.add_argument("--device", default="cuda", help="cuda, cpu or xla")
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--epochs", type=int, default=90)
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--momentum", type=float, default=0.9)
parser.add_argument("--weight-decay", type=float, default=1e-4)
parser.add_argument("--drop", type=float, default=0.2)
parser.add_argument("--smoothing", type=float, default=0.1)
parser.add_argument("--clip-grad", type=float, default=None)
parser.add_argument("--model-ema", action="store_true")
parser.add_argument("--model-ema-decay", type=float, default=0.9998)
parser.add_argument("--torchcompile", action="store_true")
parser.add_argument("--workers", type=int, default=4)
parser.add_argument("--log-interval", type=int, default=50)
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--output", default="output")


def main():
    logging.basicConfig(level=logging.INFO)
    args = parser.parse_args()

    if args.device == "xla":
        import torch_xla.core.xla_model as xm

        device = xm.xla_device()  # expect: XLA804
    else:
        device = torch.device(args.device)
        if device.type == "cuda":
            torch.cuda.set_device(device)
            torch.backends.cudnn.benchmark = True

    random_seed(args.seed)
    model = create_model(args.model, num_classes=args.num_classes, drop_rate=args.drop)
    model.to(device)
    if args.torchcompile:
        model = torch.compile(model)  # expect: XLA403

    optimizer = torch.optim.SGD(
        model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay, nesterov=True
    )
    model_ema = ModelEmaV2(model, decay=args.model_ema_decay) if args.model_ema else None
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.smoothing)

    loader_train = create_loader(TensorFolder(args.data_dir, "train"), args.batch_size, is_training=True,
                                 num_workers=args.workers)
    loader_eval = create_loader(TensorFolder(args.data_dir, "val"), args.batch_size, is_training=False,
                                num_workers=args.workers)

    os.makedirs(args.output, exist_ok=True)
    saver = CheckpointSaver(model, optimizer, args, model_ema=model_ema, checkpoint_dir=args.output)
    for epoch in range(args.epochs):
        train_metrics = train_one_epoch(
            epoch, model, loader_train, optimizer, loss_fn, args, device=device, model_ema=model_ema
        )
        eval_metrics = validate(model, loader_eval, loss_fn, args, device=device)
        scheduler.step()
        best = saver.save_checkpoint(epoch, metric=eval_metrics["top1"])
        _logger.info(f"epoch {epoch}: train loss {train_metrics['loss']:.4f} top1 {eval_metrics['top1']:.2f} "
                     f"(best {best:.2f})")


if __name__ == "__main__":
    main()

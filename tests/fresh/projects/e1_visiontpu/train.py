"""Train an ImageNet classifier on a Cloud TPU VM.

    pip install -e .
    python train.py --data /mnt/disks/imagenet --model convnext_tiny \
        --callbacks speed,nan_guard,tensorboard,ema
"""
import argparse
import functools

import torch
import torch_xla

from visiontpu import Engine, EngineConfig, build_callbacks, build_model, make_loaders


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", default="convnext_tiny")
    ap.add_argument("--epochs", type=int, default=90)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=4e-3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--callbacks", default="speed,nan_guard,tensorboard,ema")
    ap.add_argument("--logdir", default="runs/visiontpu")
    return ap.parse_args()


def worker(index, args):
    model = build_model(args.model, num_classes=1000)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)  # expect: XLA405
    train_loader, val_loader = make_loaders(args.data, args.batch_size)
    callbacks = build_callbacks(args.callbacks.split(","), logdir=args.logdir)
    cfg = EngineConfig(epochs=args.epochs, log_every=50)
    engine = Engine(model, optimizer, callbacks, cfg)
    engine.fit(train_loader, val_loader)


def main():
    args = parse_args()
    torch_xla.launch(functools.partial(worker, args=args))


if __name__ == "__main__":
    main()

import argparse

from segrun.data import build_loaders
from segrun.model import TinyUNet
from segrun.trainer import get_trainer


def parse_flags():
    p = argparse.ArgumentParser()
    p.add_argument("--device", choices=["xla", "cuda"], default="xla")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--train-size", type=int, default=2048)
    p.add_argument("--val-size", type=int, default=256)
    p.add_argument("--out", default="unet.pt")
    return p.parse_args()


def run(flags):
    train_loader, val_loader = build_loaders(flags)
    trainer = get_trainer(flags, TinyUNet(), train_loader, val_loader)
    for epoch in range(flags.epochs):
        trainer.train_epoch(epoch)
        if hasattr(trainer, "validate"):
            trainer.validate()
    trainer.save(flags.out)


def _mp_fn(index, flags):
    run(flags)


if __name__ == "__main__":
    flags = parse_flags()
    if flags.device == "xla":
        import torch_xla.distributed.xla_multiprocessing as xmp
        xmp.spawn(_mp_fn, args=(flags,), nprocs=8)  # expect: XLA001
    else:
        run(flags)

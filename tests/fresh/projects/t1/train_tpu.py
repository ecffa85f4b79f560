"""PJRT_DEVICE=TPU python train_tpu.py --data mnist_train.pt"""
import argparse

from lit_mnist import LitClassifier, MNISTDataModule
from minilight.callbacks import EpochSummary, LearningRateMonitor, ModelCheckpoint, ProgressPrinter
from minilight.xla import XLATrainer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="mnist_train.pt")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--out", default="checkpoints")
    args = p.parse_args()

    model = LitClassifier(lr=args.lr)
    dm = MNISTDataModule(args.data, batch_size=args.batch_size)
    callbacks = [ProgressPrinter(), LearningRateMonitor(100), EpochSummary(), ModelCheckpoint(args.out)]
    trainer = XLATrainer(max_epochs=args.epochs, callbacks=callbacks, gradient_clip_val=1.0, seed=1234)
    trainer.fit(model, dm)


if __name__ == "__main__":
    main()

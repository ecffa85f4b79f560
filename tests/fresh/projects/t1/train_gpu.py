"""python train_gpu.py --data mnist_train.pt   (one GPU, or the CPU)"""
import argparse

from lit_mnist import LitClassifier, MNISTDataModule
from minilight import Trainer
from minilight.callbacks import EpochSummary, ModelCheckpoint


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="mnist_train.pt")
    p.add_argument("--epochs", type=int, default=5)
    args = p.parse_args()
    trainer = Trainer(max_epochs=args.epochs, callbacks=[EpochSummary(), ModelCheckpoint("checkpoints_gpu")], seed=1234)
    trainer.fit(LitClassifier(), MNISTDataModule(args.data, batch_size=256))


if __name__ == "__main__":
    main()

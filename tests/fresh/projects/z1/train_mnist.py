"""python train_mnist.py --accelerator tpu --devices 8 --precision bf16-true"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from minilit import CPUStrategy, EpochCheckpoint, ProgressPrinter, Trainer, XLAStrategy


class LitClassifier(nn.Module):
    def __init__(self, hidden=256, lr=1e-3):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))
        self.lr = lr

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        if torch.isnan(loss):  # expect: XLA502
            raise FloatingPointError(f"NaN loss at batch {batch_idx}")
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", choices=["tpu", "cpu"], default="tpu")
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--precision", default="32-true")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    data = torch.load("mnist_train.pt")
    dataset = TensorDataset(data["x"], data["y"])
    loader = DataLoader(dataset, batch_size=64, shuffle=True, drop_last=True, num_workers=2)
    if args.accelerator == "tpu":
        strategy = XLAStrategy(num_processes=args.devices, precision=args.precision)
    else:
        strategy = CPUStrategy()
    trainer = Trainer(strategy=strategy, max_epochs=args.epochs, gradient_clip_val=1.0,
                      callbacks=[ProgressPrinter(every=50), EpochCheckpoint("checkpoints")])
    trainer.fit(LitClassifier(), loader)


if __name__ == "__main__":
    main()

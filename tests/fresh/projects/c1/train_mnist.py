"""python train_mnist.py --accelerator tpu"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from minilit import LightningModule, LossMonitor, ModelCheckpoint, ProgressBar, Trainer


class LitClassifier(LightningModule):
    def __init__(self, hidden=256, lr=0.05, batch_size=64):
        super().__init__()
        self.lr = lr
        self.batch_size = batch_size
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(28 * 28, hidden), nn.ReLU(), nn.Dropout(0.1), nn.Linear(hidden, 10)
        )

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        with torch.autocast("cuda", dtype=torch.bfloat16):  # expect: XLA701
            logits = self(x)
        loss = F.cross_entropy(logits.float(), y)
        self.log("train_loss", loss, prog_bar=True)
        return {"loss": loss}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)

    def train_dataloader(self):
        images = torch.randn(60000, 1, 28, 28)
        labels = torch.randint(0, 10, (60000,))
        dataset = TensorDataset(images, labels)
        return DataLoader(dataset, batch_size=self.batch_size, shuffle=True, drop_last=True)  # expect: XLA303


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", default="tpu")
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    trainer = Trainer(
        accelerator=args.accelerator,
        devices=args.devices,
        max_epochs=args.epochs,
        gradient_clip_val=1.0,
        callbacks=[ProgressBar(), LossMonitor(every=100), ModelCheckpoint("checkpoints/mnist")],
    )
    trainer.fit(LitClassifier())


if __name__ == "__main__":
    main()

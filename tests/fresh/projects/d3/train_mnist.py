"""MNIST with litelite on a TPU VM.

    pip install -e .[examples]
    python train_mnist.py
"""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader

from litelite import LiteModule, Trainer, XLAStrategy
from litelite.callbacks import grad_norm_callback, lr_callback

TRANSFORM = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])


class MnistNet(LiteModule):
    def __init__(self, lr=1e-3, hidden=512, data_dir="data"):
        super().__init__()
        self.lr = lr
        self.data_dir = data_dir
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(28 * 28, hidden), nn.ReLU(), nn.Dropout(0.2), nn.Linear(hidden, 10),
        )

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(-1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)  # expect: XLA405

    def train_dataloader(self):
        ds = torchvision.datasets.MNIST(self.data_dir, train=True, download=True, transform=TRANSFORM)
        return DataLoader(ds, batch_size=64, shuffle=True, num_workers=4)  # expect: XLA303 XLA304

    def val_dataloader(self):
        ds = torchvision.datasets.MNIST(self.data_dir, train=False, download=True, transform=TRANSFORM)
        return DataLoader(ds, batch_size=256, num_workers=4)

    def on_train_batch_end(self, loss, batch, batch_idx):
        if batch_idx % 100 == 0:
            print(f"batch {batch_idx}: loss {loss:.4f}")  # expect: XLA507

    def on_train_epoch_end(self, epoch):
        print(f"epoch {epoch}: train_loss {self.logged['train_loss']:.4f}")


def main():
    trainer = Trainer(
        strategy=XLAStrategy(),
        max_epochs=5,
        callbacks=[functools.partial(grad_norm_callback, norm_type=2.0), lr_callback],
        default_root_dir="checkpoints/mnist",
    )
    trainer.fit(MnistNet())


if __name__ == "__main__":
    main()

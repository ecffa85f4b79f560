"""Fine-tune a bag-of-tokens news classifier on a TPU VM with minilit.

    python train_tpu.py --data /mnt/disks/data/agnews.pt --epochs 3
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from minilit import DataModule, LitModule, Trainer, XLAStrategy
from minilit.callbacks import LossLogger, ModelCheckpoint


class NewsClassifier(LitModule):
    def __init__(self, vocab_size=30000, dim=256, num_classes=4, lr=3e-4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, num_classes))
        self.lr = lr

    def forward(self, tokens, lengths):
        x = self.embed(tokens).sum(1) / lengths.clamp(min=1).unsqueeze(-1)
        if (lengths == 0).any():  # expect: XLA502
            x = x * (lengths > 0).unsqueeze(-1)
        return self.head(x)

    def training_step(self, batch, batch_idx):
        tokens, lengths, labels = batch
        loss = F.cross_entropy(self(tokens, lengths), labels)
        self.log("train_loss", loss.item())  # expect: XLA501
        return {"loss": loss}

    def validation_step(self, batch, batch_idx):
        tokens, lengths, labels = batch
        return {"loss": F.cross_entropy(self(tokens, lengths), labels)}

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=0.01)


class NewsDataModule(DataModule):
    def __init__(self, path, batch_size=64):
        self.path = path
        self.batch_size = batch_size

    def setup(self, stage):
        blob = torch.load(self.path)
        self.train_set = TensorDataset(blob["train_tokens"], blob["train_lengths"], blob["train_labels"])
        self.val_set = TensorDataset(blob["val_tokens"], blob["val_lengths"], blob["val_labels"])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True, drop_last=True, num_workers=2)  # expect: XLA303

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", dest="batch_size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--out-dir", dest="out_dir", default="checkpoints")
    return p.parse_args()


if __name__ == "__main__":
    args = parse_args()
    trainer = Trainer(
        strategy=XLAStrategy(),
        max_epochs=args.epochs,
        callbacks=[LossLogger(every=100), ModelCheckpoint(args.out_dir)],
        default_root_dir=args.out_dir,
    )
    trainer.fit(NewsClassifier(lr=args.lr), NewsDataModule(args.data, args.batch_size))

"""Train a character-level model on every TPU core.

    PJRT_DEVICE=TPU python train_tpu.py --data input.txt
"""
import argparse

import torch
import torch_xla
from torch.utils.data import Dataset

from models import CharTransformer
from nanotrain import LossLogger, MetricsHistory, TrainerConfig, set_seed
from nanotrain.tpu import TPUTrainer


class CharDataset(Dataset):
    def __init__(self, text, block_size):
        chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(chars)}
        self.vocab_size = len(chars)
        self.block_size = block_size
        self.data = torch.tensor([self.stoi[c] for c in text], dtype=torch.long)

    def __len__(self):
        return len(self.data) - self.block_size - 1

    def __getitem__(self, i):
        chunk = self.data[i : i + self.block_size + 1]
        return chunk[:-1], chunk[1:]


def _mp_fn(index, args):
    set_seed(args.seed + index)  # expect: XLA205
    with open(args.data) as f:
        text = f.read()
    dataset = CharDataset(text, args.block_size)
    model = CharTransformer(dataset.vocab_size, args.block_size, dropout=args.dropout)
    config = TrainerConfig(
        batch_size=args.batch_size,
        epochs=args.epochs,
        lr=args.lr,
        output_dir=args.output_dir,
    )
    callbacks = [LossLogger(every=args.log_every), MetricsHistory(f"{args.output_dir}/history.json")]
    trainer = TPUTrainer(model, dataset, config, callbacks=callbacks)
    trainer.fit()


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="input.txt")
    p.add_argument("--block-size", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--output-dir", default="out")
    return p.parse_args()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(parse_args(),))

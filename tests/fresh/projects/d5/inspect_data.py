"""Laptop sanity check: a few CPU steps of a small TinyLM on the first windows of the data.

    python inspect_data.py data/tokens.npy
"""
import sys

import torch

from data import TokenDataset, batch_stream
from model import TinyLM
from seeding import seed_all


def main(path, steps=20):
    seed_all(0)
    dataset = TokenDataset(path, seq_len=128)
    print(f"{len(dataset)} windows of 128 tokens")
    model = TinyLM(vocab_size=32000, dim=128, n_layers=2, n_heads=4, max_len=128)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step, (inputs, targets) in enumerate(batch_stream(dataset, batch_size=4, epoch=0, workers=0)):
        loss = model(inputs, targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step}: loss {loss.item():.3f}")
        if step + 1 == steps:
            break


if __name__ == "__main__":
    main(sys.argv[1])

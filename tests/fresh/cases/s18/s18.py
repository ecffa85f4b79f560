"""Evaluation and decoding for a small LM on one TPU chip.

Reported: evaluation gets slower with every batch; decoding compiles once per token.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset


class TinyLM(nn.Module):
    def __init__(self, vocab=1000, dim=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h, _ = self.mix(self.embed(ids))
        return self.head(h)


@torch.no_grad()
def evaluate(model, path):
    dev = torch_xla.device()
    blob = torch.load(path)
    loader = DataLoader(TensorDataset(blob["inputs"], blob["targets"]), batch_size=32)
    total = torch.zeros((), device=dev)
    count = 0
    for inputs, targets in loader:  # expect: XLA508
        logits = model(inputs.to(dev))
        total += F.cross_entropy(logits.flatten(0, 1), targets.to(dev).flatten(), reduction="sum")
        count += targets.numel()
        print(f"running nll {total.item() / count:.4f}")
    return total.item() / count


@torch.no_grad()
def evaluate_synced(model, path):
    dev = torch_xla.device()
    blob = torch.load(path)
    loader = DataLoader(TensorDataset(blob["inputs"], blob["targets"]), batch_size=32)
    total = torch.zeros((), device=dev)
    for i, (inputs, targets) in enumerate(loader):
        logits = model(inputs.to(dev))
        total += F.cross_entropy(logits.flatten(0, 1), targets.to(dev).flatten(), reduction="sum")
        print(f"batch {i}: running nll {total.item():.2f}")
        torch_xla.sync()
    return total.item()


@torch.no_grad()
def per_batch_losses(model, path):
    dev = torch_xla.device()
    blob = torch.load(path)
    loader = DataLoader(TensorDataset(blob["inputs"], blob["targets"]), batch_size=32)
    losses = []
    for inputs, targets in pl.MpDeviceLoader(loader, dev):
        logits = model(inputs)
        losses.append(F.cross_entropy(logits.flatten(0, 1), targets.flatten()).item())
    return losses


@torch.no_grad()
def decode(model, prompt, steps=50):
    dev = torch_xla.device()
    ids = torch.tensor([prompt], device=dev)
    for _ in range(steps):  # expect: XLA508
        nxt = model(ids)[:, -1].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
        print(nxt.item(), end=" ", flush=True)
    return ids.cpu()


if __name__ == "__main__":
    lm = TinyLM().to(torch_xla.device()).eval()
    print(evaluate(lm, "valid.pt"))
    print(evaluate_synced(lm, "valid.pt"))
    print(sum(per_batch_losses(lm, "valid.pt")))
    print(decode(lm, [1, 17, 42]).tolist())

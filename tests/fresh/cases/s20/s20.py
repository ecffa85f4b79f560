"""Sentiment classifier trained with SPMD data parallel on one TPU host.

Reported: labels end up replicated on every device; loss scale looks off.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self, path):
        blob = torch.load(path)
        self.ids = blob["input_ids"]
        self.mask = blob["attention_mask"]
        self.labels = blob["labels"]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {
            "input_ids": self.ids[i],
            "attention_mask": self.mask[i],
            "label": torch.tensor(int(self.labels[i])),
        }


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab=30522, dim=256, classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, input_ids, attention_mask):
        h = self.embed(input_ids)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(pooled)


def main():
    xr.use_spmd()
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n,), ("data",))
    device = torch_xla.device()
    print(f"processes: {xr.world_size()}, devices: {n}")

    model = BagOfEmbeddings().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4)

    train_loader = pl.MpDeviceLoader(  # expect: XLA910
        DataLoader(Reviews("train.pt"), batch_size=128, shuffle=True, drop_last=True),
        device,
        input_sharding=xs.ShardingSpec(mesh, ("data", None)),
    )
    eval_ds = Reviews("valid.pt")
    eval_loader = pl.MpDeviceLoader(
        DataLoader(eval_ds, batch_size=128),
        device,
        input_sharding={
            "input_ids": xs.ShardingSpec(mesh, ("data", None)),
            "attention_mask": xs.ShardingSpec(mesh, ("data", None)),
            "label": xs.ShardingSpec(mesh, ("data",)),
        },
    )

    for epoch in range(3):
        model.train()
        for step, batch in enumerate(train_loader):
            logits = model(batch["input_ids"], batch["attention_mask"])
            loss = F.cross_entropy(logits, batch["label"])
            loss.backward()
            opt.step()
            opt.zero_grad()
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA501

        model.eval()
        correct = torch.zeros((), device=device)
        with torch.no_grad():
            for batch in eval_loader:
                pred = model(batch["input_ids"], batch["attention_mask"]).argmax(-1)
                correct += (pred == batch["label"]).sum()
        print(f"epoch {epoch} accuracy {correct.item() / len(eval_ds):.4f}")


if __name__ == "__main__":
    main()

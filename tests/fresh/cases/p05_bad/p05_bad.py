# Bug report: SPMD text classifier, "labels are replicated on every chip and the loss
# graph has an all-gather". One ShardingSpec(mesh, ("data", None)) is given for a dict
# batch whose values have rank 2 (input_ids, attention_mask) and rank 1 (label).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset


class TokenizedReviews(Dataset):
    def __init__(self, n=10000, seq_len=256, vocab=30522):
        self.ids = torch.randint(0, vocab, (n, seq_len))
        self.mask = torch.ones(n, seq_len, dtype=torch.long)
        self.labels = torch.randint(0, 2, (n,))

    def __len__(self):
        return self.ids.shape[0]

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": self.mask[i], "label": self.labels[i]}


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab=30522, dim=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, 2)

    def forward(self, input_ids, attention_mask):
        m = attention_mask.unsqueeze(-1).to(torch.float32)
        pooled = (self.emb(input_ids) * m).sum(1) / m.sum(1)
        return self.out(pooled)


def main():
    xr.use_spmd()
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))
    device = torch_xla.device()
    model = BagOfEmbeddings().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    loader = DataLoader(TokenizedReviews(), batch_size=128, shuffle=True, drop_last=True)
    train_loader = pl.MpDeviceLoader(loader, device, input_sharding=xs.ShardingSpec(mesh, ("data", None)))  # expect: XLA910
    for epoch in range(2):
        for batch in train_loader:
            optimizer.zero_grad()
            logits = model(batch["input_ids"], batch["attention_mask"])
            loss = F.cross_entropy(logits, batch["label"])
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()

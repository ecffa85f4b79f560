"""BERT-style fine-tune ported from a GPU trainer to xmp.spawn: loss diverges after
warm-up; gradient clipping behaves differently on each core."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class PairClassifier(nn.Module):
    def __init__(self, vocab=30522, dim=384, classes=3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.head = nn.Sequential(nn.Linear(2 * dim, dim), nn.Tanh(), nn.Linear(dim, classes))

    def forward(self, a, b):
        return self.head(torch.cat([self.embed(a), self.embed(b)], dim=-1))


def _mp_fn(index, cfg):
    device = torch_xla.device()
    blob = torch.load(cfg["data"])
    ds = TensorDataset(blob["a"], blob["b"], blob["label"])
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    loader = DataLoader(ds, batch_size=cfg["bs"], sampler=sampler, drop_last=True)
    model = PairClassifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=500)
    for epoch in range(cfg["epochs"]):
        sampler.set_epoch(epoch)
        for a, b, label in pl.MpDeviceLoader(loader, device):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(a, b), label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # expect: XLA203
            xm.optimizer_step(optimizer)
            optimizer.step()  # expect: XLA207
            scheduler.step()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=({"data": "mnli.pt", "bs": 32, "lr": 2e-5, "epochs": 3},))

"""Distillation on one TPU chip: the run hangs at the first batch
(pytorch/xla#4131 shape: the collator holds the teacher, which lives on the XLA device).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset


def mlp(dim, hidden, out):
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, out))


class DistillCollator:
    def __init__(self, teacher, temperature=2.0):
        self.teacher = teacher
        self.t = temperature

    def __call__(self, samples):
        x = torch.stack([s[0] for s in samples])
        y = torch.stack([s[1] for s in samples])
        dev = next(self.teacher.parameters()).device
        with torch.no_grad():
            soft = F.softmax(self.teacher(x.to(dev)) / self.t, dim=-1)
        return x, y, soft


def main():
    device = torch_xla.device()
    blob = torch.load("train_features.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    teacher = mlp(256, 2048, 10).to(device).eval()
    teacher.load_state_dict(torch.load("teacher.pt", map_location="cpu"))
    student = mlp(256, 256, 10).to(device)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    loader = DataLoader(
        dataset,
        batch_size=128,
        shuffle=True,
        drop_last=True,
        num_workers=4,
        collate_fn=DistillCollator(teacher),  # expect: XLA305
    )
    for epoch in range(10):
        for x, y, soft in pl.MpDeviceLoader(loader, device):
            logits = student(x)
            loss = F.cross_entropy(logits, y) + F.kl_div(
                F.log_softmax(logits / 2.0, dim=-1), soft, reduction="batchmean")
            loss.backward()
            opt.step()
            opt.zero_grad()


if __name__ == "__main__":
    main()

"""Distillation on one TPU chip, fixed: the workers only stack CPU samples;
the teacher runs in the training step on the device."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset


def mlp(dim, hidden, out):
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, out))


def main():
    device = torch_xla.device()
    blob = torch.load("train_features.pt")
    dataset = TensorDataset(blob["x"], blob["y"])
    teacher = mlp(256, 2048, 10).to(device).eval()
    teacher.load_state_dict(torch.load("teacher.pt", map_location="cpu"))
    student = mlp(256, 256, 10).to(device)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    loader = DataLoader(dataset, batch_size=128, shuffle=True, drop_last=True, num_workers=4)
    for epoch in range(10):
        for x, y in pl.MpDeviceLoader(loader, device):
            with torch.no_grad():
                soft = F.softmax(teacher(x) / 2.0, dim=-1)
            logits = student(x)
            loss = F.cross_entropy(logits, y) + F.kl_div(
                F.log_softmax(logits / 2.0, dim=-1), soft, reduction="batchmean")
            loss.backward()
            opt.step()
            opt.zero_grad()


if __name__ == "__main__":
    main()

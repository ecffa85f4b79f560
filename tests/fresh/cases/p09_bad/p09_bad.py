# Bug report: "spectral-norm monitor takes minutes per call on TPU". After each epoch we
# estimate the top singular value of every weight by power iteration; v is carried on the
# device across iterations and sigma.item() is read every iteration with no sync, so each
# read executes an ever-longer pending graph.
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset


def top_singular_value(w, iters=100, tol=1e-4):
    v = torch.ones(w.shape[1], device=w.device) / w.shape[1] ** 0.5
    prev = 0.0
    for _ in range(iters):  # expect: XLA508
        v = w.t() @ (w @ v)
        v = v / v.norm()
        sigma = (w @ v).norm().item()
        if abs(sigma - prev) < tol * max(sigma, 1.0):
            break
        prev = sigma
    return prev


def main():
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.randn(2048, 64)
    loader = DataLoader(TensorDataset(data, data * 2.0), batch_size=64, drop_last=True)
    for epoch in range(3):
        for x, y in pl.MpDeviceLoader(loader, device):
            optimizer.zero_grad()
            loss = (model(x) - y).abs().mean()
            loss.backward()
            optimizer.step()
        for name, p in model.named_parameters():
            if p.dim() == 2:
                print(epoch, name, top_singular_value(p.detach()))


if __name__ == "__main__":
    main()

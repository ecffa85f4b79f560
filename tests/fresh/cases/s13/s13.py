# Single-device image regression with periodic logging and a validation pass.
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset


def make_loaders():
    x = torch.randn(12000, 1, 28, 28)
    y = x.mean(dim=(1, 2, 3)).unsqueeze(-1)
    train = DataLoader(TensorDataset(x[:10000], y[:10000]), batch_size=100, shuffle=True, drop_last=True)
    val = DataLoader(TensorDataset(x[10000:], y[10000:]), batch_size=100, drop_last=True)
    return train, val


def evaluate(model, val_loader, device):
    model.eval()
    errs = []
    with torch.no_grad():
        for x, y in pl.MpDeviceLoader(val_loader, device):
            err = (model(x) - y).abs().mean()
            errs.append(err.item())
    model.train()
    return sum(errs) / len(errs)


def track_weight_drift(model, reference, device, rounds=10):
    drift = torch.zeros((), device=device)
    for r in range(rounds):  # expect: XLA508
        for p, q in zip(model.parameters(), reference):
            drift = drift + (p.detach() - q).pow(2).sum()
        print(f"round {r}: cumulative drift {float(drift):.6f}")
    return drift


def main():
    device = torch_xla.device()
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 1)).to(device)
    reference = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_loader, val_loader = make_loaders()
    for epoch in range(5):
        for step, (x, y) in enumerate(pl.MpDeviceLoader(train_loader, device)):
            optimizer.zero_grad()
            loss = nn.functional.l1_loss(model(x), y)
            loss.backward()
            torch_xla.sync()  # expect: XLA505
            optimizer.step()
            if step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507
        print(f"epoch {epoch} val mae {evaluate(model, val_loader, device):.4f}")
    track_weight_drift(model, reference, device)


if __name__ == "__main__":
    main()

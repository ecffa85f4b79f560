# Single-TPU-core fine-tuning of a small autoencoder, no launcher. Plain DataLoader with a
# per-step graph cut (xm.mark_step), so no MpDeviceLoader finding; optimizer.step() is
# right on one device.
import time

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader, TensorDataset


class AutoEncoder(nn.Module):
    def __init__(self, d=128, z=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, 64), nn.ReLU(), nn.Linear(64, z))
        self.dec = nn.Sequential(nn.Linear(z, 64), nn.ReLU(), nn.Linear(64, d))

    def forward(self, x):
        return self.dec(self.enc(x))


def benchmark_forward(model, device, batch=256):
    x = torch.randn(batch, 128).to(device)
    t0 = time.perf_counter()
    out = model(x)
    dt = time.perf_counter() - t0  # expect: XLA504
    return out, dt


def main():
    device = xm.xla_device()  # expect: XLA804
    model = AutoEncoder().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.randn(16384, 128)
    loader = DataLoader(TensorDataset(data), batch_size=256, shuffle=True, drop_last=True)
    for epoch in range(20):
        for (x,) in loader:
            x = x.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), x)
            loss.backward()
            optimizer.step()
            xm.mark_step()  # expect: XLA805
        xm.master_print(f"epoch {epoch} loss {loss.item():.5f}")
    _, seconds = benchmark_forward(model, device)
    print(f"forward took {seconds * 1e3:.2f} ms")


if __name__ == "__main__":
    main()

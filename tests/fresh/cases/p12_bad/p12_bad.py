# Bug report: porting a CUDA regression script to a TPU VM by changing the device string;
# it fails with "Expected one of cpu, cuda, ... device type at start of device string:
# xla". torch_xla is never imported.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 128), nn.SiLU(), nn.Linear(128, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def make_loader(n=8192, d=32):
    x = torch.randn(n, d)
    y = x[:, :4].sum(-1) + 0.1 * torch.randn(n)
    return DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True, drop_last=True)


def train(epochs=5):
    device = torch.device("xla")  # expect: XLA406
    model = Regressor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = make_loader()
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: last loss {loss.item():.4f}")


if __name__ == "__main__":
    train()

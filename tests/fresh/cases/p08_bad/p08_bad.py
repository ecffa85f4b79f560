# Bug report: weight-shared "universal transformer"-style refinement loop rewritten with
# scan to cut compile time; training diverges. The scanned body calls self.proj and
# self.norm (layers captured from the enclosing method) instead of carrying the weights.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset
from torch_xla.experimental import scan as scan_lib


class Refiner(nn.Module):
    def __init__(self, dim=256, iters=12):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.iters = iters

    def forward(self, x):
        ticks = torch.zeros(self.iters, device=x.device)

        def body(h, _tick):
            h = h + torch.tanh(self.proj(self.norm(h)))
            return h, None

        h, _ = scan_lib.scan(body, x, ticks)  # expect: XLA911
        return h


def main():
    device = torch_xla.device()
    model = Refiner().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    src = torch.randn(4096, 256)
    loader = DataLoader(TensorDataset(src, src.flip(-1)), batch_size=128, shuffle=True, drop_last=True)
    for epoch in range(4):
        for x, y in pl.MpDeviceLoader(loader, device):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()

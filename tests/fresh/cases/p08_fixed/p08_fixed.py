# Fixed: the shared layer's weights are carried through scan and applied functionally.
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

        def body(carry, _tick):
            h, w, b, g, beta = carry
            h = h + torch.tanh(F.linear(F.layer_norm(h, h.shape[-1:], g, beta), w, b))
            return (h, w, b, g, beta), None

        init = (x, self.proj.weight, self.proj.bias, self.norm.weight, self.norm.bias)
        (h, _, _, _, _), _ = scan_lib.scan(body, init, ticks)
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

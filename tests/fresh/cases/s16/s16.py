# A plain PyTorch script (no torch_xla import anywhere) that someone pointed at a TPU by
# writing device strings; the CUDA parts are fine here because this is not XLA code.
import os

os.environ["PJRT_DEVICES"] = "TPU"  # expect: XLA813

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train(prefer_tpu=True, epochs=3):
    use_cuda = torch.cuda.is_available() and not prefer_tpu
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    if use_cuda:
        model = model.cuda()
        torch.cuda.empty_cache()
    else:
        model = model.to("xla")  # expect: XLA406
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(4096, 16)
    loader = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=64)
    scale = torch.ones(1, device="xla") if not use_cuda else torch.ones(1).cuda()  # expect: XLA406
    for epoch in range(epochs):
        for xb, yb in loader:
            xb, yb = xb.to(scale.device), yb.to(scale.device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(xb) * scale, yb)
            loss.backward()
            optimizer.step()
            print(f"loss {loss.item():.4f}")
    torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    train()

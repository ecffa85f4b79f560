# Fixed: the weights travel in the carry, the step function reads nothing from outside.
import torch
import torch.nn as nn
import torch_xla
from torch_xla.experimental.scan import scan


class ScanRNN(nn.Module):
    def __init__(self, d_in=64, d_h=128):
        super().__init__()
        self.w_x = nn.Parameter(torch.randn(d_in, d_h) * 0.02)
        self.w_h = nn.Parameter(torch.eye(d_h))
        self.readout = nn.Linear(d_h, 1)

    def forward(self, seq, h0):
        def step(carry, x_t):
            h, w_x, w_h = carry
            h_new = torch.tanh(x_t @ w_x + h @ w_h)
            return (h_new, w_x, w_h), h_new

        (h_last, _, _), _ = scan(step, (h0, self.w_x, self.w_h), seq)
        return self.readout(h_last)


def train(steps=300, batch=32, seq_len=50):
    device = torch_xla.device()
    model = ScanRNN().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        seq = torch.randn(seq_len, batch, 64, device=device)
        target = seq.mean(dim=(0, 2)).unsqueeze(-1)
        h0 = torch.zeros(batch, 128, device=device)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(seq, h0), target)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
    return model


if __name__ == "__main__":
    train()

"""Linear recurrence written with torch_xla's scan to avoid unrolling 2k steps.

Reported: AssertionError: Please convert all Tensors to FakeTensors first ...
"""
import torch
import torch.nn as nn
import torch_xla
from torch_xla.experimental.scan import scan, scan_layers


class DecayRNN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.decay = nn.Parameter(torch.full((dim,), 0.9))

    def forward(self, seq, h0):
        # seq: (T, B, D)
        def step(h, x):
            h = torch.tanh(self.inp(x) + self.decay * h)
            return h, h

        last, hs = scan(step, h0, seq)  # expect: XLA911
        return last, hs


class DecayRNNCarried(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim, dim) / dim ** 0.5)
        self.decay = nn.Parameter(torch.full((dim,), 0.9))

    def forward(self, seq, h0):
        def step(carry, x):
            h, w, decay = carry
            h = torch.tanh(x @ w + decay * h)
            return (h, w, decay), h

        (last, _, _), hs = scan(step, (h0, self.w, self.decay), seq)
        return last, hs


def ema(seq, alpha):
    dev = torch_xla.device()
    keep = torch.full((seq.size(-1),), 1.0 - alpha, device=dev)

    def body(acc, x):
        acc = acc * keep + alpha * x
        return acc, acc

    return scan(body, torch.zeros(seq.size(-1), device=dev), seq)  # expect: XLA911


def main():
    dev = torch_xla.device()
    seq = torch.randn(2048, 8, 64, device=dev)
    h0 = torch.zeros(8, 64, device=dev)
    for model in (DecayRNN(64).to(dev), DecayRNNCarried(64).to(dev)):
        last, hs = model(seq, h0)
        hs.pow(2).mean().backward()
        torch_xla.sync()
    layers = nn.ModuleList([nn.Linear(64, 64) for _ in range(12)]).to(dev)
    out = scan_layers(layers, h0)
    smooth, _ = ema(seq, 0.1)
    torch_xla.sync()
    print(out.shape, smooth.shape)


if __name__ == "__main__":
    main()

"""Check a consolidated checkpoint on a laptop: perplexity on a token file, on the CPU.

python eval_cpu.py --weights consolidated.pt --data val.bin
python eval_cpu.py --smoke            # three optimizer steps on random tokens
"""
import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F

from config import TrainConfig
from model import Transformer, count_parameters


def small_config():
    return TrainConfig(dim=256, n_layers=2, n_heads=4, seq_len=128, vocab_size=32000)


def smoke_train(cfg, steps=3):
    model = Transformer(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(steps):
        ids = torch.randint(0, cfg.vocab_size, (2, cfg.seq_len + 1))
        loss = F.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"smoke step {step}: loss {loss.item():.3f}")
    torch.save(model.state_dict(), "smoke.pt")


@torch.no_grad()
def perplexity(cfg, weights, data):
    model = Transformer(cfg)
    model.load_state_dict(torch.load(weights, map_location="cpu"))
    model.eval()
    print(f"{count_parameters(model) / 1e6:.1f}M parameters")
    tokens = np.fromfile(data, dtype=np.uint16)
    nll, windows = 0.0, 0
    for start in range(0, len(tokens) - cfg.seq_len - 1, cfg.seq_len):
        ids = torch.from_numpy(tokens[start:start + cfg.seq_len + 1].astype(np.int64))[None]
        nll += F.cross_entropy(model(ids[:, :-1])[0], ids[0, 1:]).item()
        windows += 1
    return math.exp(nll / max(windows, 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--weights")
    p.add_argument("--data")
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args()
    if args.smoke:
        smoke_train(small_config())
    else:
        print(f"perplexity {perplexity(TrainConfig(), args.weights, args.data):.2f}")


if __name__ == "__main__":
    main()

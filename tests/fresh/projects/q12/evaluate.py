"""Evaluate a checkpoint on the CPU: python evaluate.py runs/mixer/best.pt"""
import sys

import torch

from configs import TrainConfig
from datamod import make_loader
from helpers import evaluate
from zoo import build_model


def main(path):
    cfg = TrainConfig()
    model = build_model(cfg.model)
    model.load_state_dict(torch.load(path, map_location="cpu"))
    loader = make_loader(cfg.data, "val")
    acc = evaluate(model, loader, torch.device("cpu"))
    print(f"top-1 {acc:.4f}")
    errs = []
    with torch.no_grad():
        for images, labels in loader:
            pred = model(images).argmax(dim=-1)
            errs.extend((pred != labels).nonzero().flatten().tolist())
    print(f"{len(errs)} misclassified")


if __name__ == "__main__":
    main(sys.argv[1])

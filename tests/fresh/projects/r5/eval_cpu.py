"""Evaluate a checkpoint on a workstation (no TPU), optionally re-fitting the head.

    python eval_cpu.py --ckpt best.pt --val val.npz [--train train.npz --probe-steps 20]
"""
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import Subset

from tpu_cls.data import NpzImages, build_loader, evaluate
from tpu_cls.model import SmallResNet


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--val", required=True)
    p.add_argument("--train")
    p.add_argument("--num-classes", type=int, default=100)
    p.add_argument("--probe-steps", type=int, default=0)
    args = p.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SmallResNet(num_classes=args.num_classes)
    state = torch.load(args.ckpt, map_location="cpu")
    model.load_state_dict(state["model"])
    model.to(device)

    val_loader = build_loader(NpzImages(args.val), 256, train=False, num_workers=0)
    print(f"val accuracy {evaluate(model, val_loader, device):.4f}")

    if args.train and args.probe_steps:
        probe = build_loader(Subset(NpzImages(args.train), range(2048)), 64, train=True, num_workers=0)
        head_opt = torch.optim.SGD(model.fc.parameters(), lr=0.01)
        model.train()
        for step, (images, labels) in enumerate(probe):
            loss = F.cross_entropy(model(images.to(device)), labels.to(device))
            head_opt.zero_grad()
            loss.backward()
            head_opt.step()
            print(f"probe step {step}: loss {loss.item():.4f}")
            if step + 1 >= args.probe_steps:
                break
        print(f"val accuracy after probe {evaluate(model, val_loader, device):.4f}")


if __name__ == "__main__":
    main()

"""Score a checkpoint on the validation set on a CPU box (no accelerator).

    python eval_cpu.py /data/imagenet out/resnet50/model_best.pth.tar
"""
import argparse

import torch
from torchvision import models

from data import build_loader, imagenet_datasets
from utils import AverageMeter, accuracy, get_rank


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("checkpoint")
    ap.add_argument("--limit", type=int, default=0, help="stop after this many batches")
    args = ap.parse_args()
    ckpt = torch.load(args.checkpoint, map_location="cpu")
    state = {k.removeprefix("module."): v.cpu() for k, v in ckpt["state_dict"].items()}
    model = models.resnet50()
    model.load_state_dict(state)
    model.eval()
    _, val_ds = imagenet_datasets(args.data)
    loader = build_loader(val_ds, 64, workers=4, train=False)
    top1, top5 = AverageMeter("Acc@1"), AverageMeter("Acc@5")
    with torch.no_grad():
        for i, (images, target) in enumerate(loader):
            acc1, acc5 = accuracy(model(images), target, topk=(1, 5))
            top1.update(acc1, images.size(0))
            top5.update(acc5, images.size(0))
            if args.limit and i + 1 >= args.limit:
                break
    if get_rank() == 0:
        print(f"checkpoint epoch {ckpt['epoch']}: top-1 {top1.avg:.2f}  top-5 {top5.avg:.2f}")


if __name__ == "__main__":
    main()

"""Helpers shared by train_gpu.py (torchrun), train_tpu.py and eval_cpu.py."""
import os
import random
import shutil

import numpy as np
import torch


class AverageMeter:
    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        return ("{name} {val" + self.fmt + "} ({avg" + self.fmt + "})").format(**self.__dict__)


class ProgressMeter:
    def __init__(self, num_batches, meters, prefix=""):
        self.num_batches = num_batches
        self.meters = meters
        self.prefix = prefix

    def display(self, batch):
        print("\t".join([f"{self.prefix}[{batch}/{self.num_batches}]"] + [str(m) for m in self.meters]), flush=True)


def accuracy(output, target, topk=(1,)):
    """Top-k accuracy in percent, as Python floats."""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0)
            res.append(correct_k.mul_(100.0 / batch_size).item())  # expect: XLA501
        return res


def get_rank():
    return int(os.environ.get("RANK", "0"))


def get_world_size():
    return int(os.environ.get("WORLD_SIZE", "1"))  # expect: XLA109


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def build_optimizer(model, lr, momentum=0.9, weight_decay=1e-4):
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=True)  # expect: XLA405


def adjust_learning_rate(optimizer, epoch, base_lr, warmup=5, total=90):
    if epoch < warmup:
        lr = base_lr * (epoch + 1) / warmup
    else:
        lr = base_lr * 0.5 * (1 + np.cos(np.pi * (epoch - warmup) / (total - warmup)))
    for group in optimizer.param_groups:
        group["lr"] = lr
    return lr


def save_checkpoint(state, is_best, out_dir, filename="checkpoint.pth.tar"):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, filename)
    torch.save(state, path)  # expect: XLA601
    if is_best:
        shutil.copyfile(path, os.path.join(out_dir, "model_best.pth.tar"))


def cuda_timer_sync():
    torch.cuda.synchronize()

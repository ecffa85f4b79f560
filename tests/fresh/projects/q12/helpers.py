import subprocess

import torch
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def train_step(model, batch, optimizer, device, xm, meter):
    images, labels = batch
    images, labels = images.to(device), labels.to(device)
    optimizer.zero_grad()
    logits = model(images)
    # samples relabelled -1 by the noisy-label filter are skipped
    keep = torch.nonzero(labels >= 0).squeeze(1)  # expect: XLA503
    loss = F.cross_entropy(logits.index_select(0, keep), labels.index_select(0, keep), label_smoothing=0.1)
    loss.backward()
    xm.optimizer_step(optimizer)
    meter.update(loss.item(), images.size(0))  # expect: XLA501
    xm.mark_step()  # expect: XLA805
    return loss


def train_epoch(model, loader, optimizer, device, xm):
    model.train()
    meter = AverageMeter()
    for batch in loader:
        train_step(model, batch, optimizer, device, xm, meter)
    return meter.avg


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    seen = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        correct += (model(images).argmax(dim=-1) == labels).sum()
        seen += labels.size(0)
    return correct.item() / max(seen, 1)


def upload(local_dir, bucket):
    subprocess.run(["gsutil", "-m", "cp", "-r", local_dir, bucket], check=True)

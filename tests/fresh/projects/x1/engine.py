"""Train and eval loops (DeiT engine.py shape). No device code here."""
import math
import sys

import torch

from utils.dist import SmoothedValue


def train_one_epoch(model, criterion, data_loader, optimizer, epoch, max_norm=0.0):
    model.train()
    loss_meter = SmoothedValue()
    for samples, targets in data_loader:
        outputs = model(samples)
        loss = criterion(outputs, targets)
        loss_value = loss.item()  # expect: XLA501
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            sys.exit(1)
        optimizer.zero_grad()
        loss.backward()
        if max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        loss_meter.update(loss_value, n=samples.shape[0])
    print(f"epoch {epoch}: train loss {loss_meter.global_avg:.4f}")
    return {"train_loss": loss_meter.global_avg}


@torch.no_grad()
def evaluate(data_loader, model):
    model.eval()
    correct, total = 0, 0
    for images, target in data_loader:
        output = model(images)
        correct += (output.argmax(dim=-1) == target).sum().item()
        total += target.shape[0]
    acc1 = 100.0 * correct / max(total, 1)
    print(f"* Acc@1 {acc1:.3f}")
    return {"acc1": acc1}

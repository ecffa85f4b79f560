"""Training and evaluation loops shared by every accelerator."""
import os

import torch
import torch.nn.functional as F


def train_one_epoch(acc, model, loader, optimizer, epoch, log_every):
    model.train()
    seen = 0
    for step, (images, labels) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        logits = model(images)
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
        if not torch.isfinite(loss):  # expect: XLA502
            continue
        loss.backward()
        acc.step(optimizer)
        seen += images.size(0)
        if step % log_every == 0:
            print(f"[{acc.name}] epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507
    return seen


@torch.no_grad()
def evaluate(acc, model, loader):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=acc.device())
    total = 0
    for images, labels in loader:
        preds = model(images).argmax(dim=-1)
        correct += (preds == labels).sum()
        total += labels.size(0)
    return correct.item() / max(total, 1)


def save_checkpoint(model, optimizer, epoch, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    state = {
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
    }
    torch.save(state, path)  # expect: XLA601

import torch
import torch.nn.functional as F

from .utils import amp_context, is_main


def train_epoch(model, optimizer, loader, device, epoch, scaler=None, amp_device="cuda", log_every=50):
    model.train()
    seen = 0
    for step, (images, labels) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        with amp_context(amp_device):
            loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        if not torch.isfinite(loss):  # expect: XLA502
            continue
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        seen += labels.size(0)
        if step % log_every == 0 and is_main():
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507
    return seen

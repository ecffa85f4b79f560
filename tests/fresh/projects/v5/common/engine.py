import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, device, epoch, log_every=100, is_main=True):
    model.train()
    for step, (ids, labels) in enumerate(loader):
        ids, labels = ids.to(device), labels.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(ids), labels)
        loss.backward()
        optimizer.step()  # expect: XLA201
        if step % log_every == 0 and is_main:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")  # expect: XLA507


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), device=device)
    count = torch.zeros((), device=device)
    for ids, labels in loader:
        ids, labels = ids.to(device), labels.to(device)
        correct += (model(ids).argmax(-1) == labels).sum()
        count += labels.numel()
    return correct, count

import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm


def train_one_epoch(model, optimizer, loader, metric, logger):
    model.train()
    running = torch.zeros((), device=next(model.parameters()).device)
    steps = 0
    for step, (images, labels) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        logits = model(images)
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
        loss.backward()
        xm.optimizer_step(optimizer)
        metric.update(logits, labels)
        logger.log_step(step, loss)
        running += loss.detach()
        steps += 1
    return running / max(steps, 1), metric.compute()


def evaluate(model, loader):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images).argmax(dim=1) == labels).sum().item()
            total += labels.size(0)
    return correct / max(total, 1)

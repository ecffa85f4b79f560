"""Notebook cells: the train and validation loops."""
import torch_xla.core.xla_model as xm

from metrics import masked_ce_loss


def train_loop_fn(loader, model, optimizer, logger, flags):
    model.train()
    for bi, (images, labels) in enumerate(loader):
        optimizer.zero_grad()
        outputs = model(images)
        loss = masked_ce_loss(outputs, labels)
        loss.backward()
        xm.optimizer_step(optimizer, barrier=True)  # expect: XLA204
        logger.update("loss", loss.detach(), images.size(0))
        if bi % flags["log_steps"] == 0:
            xm.master_print(f"bi={bi}, loss={loss}")  # expect: XLA507


def valid_loop_fn(loader, model):
    model.eval()
    correct, total = 0, 0
    for images, labels in loader:
        preds = model(images).argmax(dim=1)
        correct += (preds == labels).sum()
        total += labels.size(0)
    return correct.item() / max(total, 1)

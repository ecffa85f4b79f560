import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm


def _log(step, loss):
    print(f"step {step}: loss {loss.item():.4f}")


def train_epoch(model, loader, optimizer, log_every):
    model.train()
    for step, (ids, labels) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(ids), labels)
        if torch.isnan(loss):  # expect: XLA502
            continue
        loss.backward()
        xm.optimizer_step(optimizer)
        if step % log_every == 0:
            xm.add_step_closure(_log, args=(step, loss))


@torch.no_grad()
def eval_epoch(model, loader):
    model.eval()
    correct = 0
    seen = 0
    for ids, labels in loader:
        preds = model(ids).argmax(dim=-1)
        correct += (preds == labels).sum().item()
        seen += labels.numel()
    return correct / max(seen, 1)

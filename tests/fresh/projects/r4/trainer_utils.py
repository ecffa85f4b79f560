import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

from metrics import log_step


def lm_loss(logits, labels):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


def train_epoch(model, loader, optimizer, scheduler, log_every=20, max_norm=1.0):
    model.train()
    for step, (input_ids, labels) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        loss = lm_loss(model(input_ids), labels)
        loss.backward()
        model.clip_grad_norm_(max_norm)
        xm.optimizer_step(optimizer)  # expect: XLA202
        scheduler.step()
        if step % log_every == 0:
            log_step(xm, loss, step, scheduler.get_last_lr()[0])


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total, batches = 0.0, 0
    for input_ids, labels in loader:
        total += lm_loss(model(input_ids), labels).item()
        batches += 1
    return total / max(batches, 1)

"""One epoch of training and one pass of evaluation."""
import torch
import torch.nn.functional as F

from metric_logger import MetricLogger, SmoothedValue


def train_one_epoch(model, optimizer, loader, epoch, print_freq):
    model.train()
    metric_logger = MetricLogger(delimiter="  ")
    metric_logger.add_meter("lr", SmoothedValue(window_size=1, fmt="{value:.6f}"))
    header = f"Epoch: [{epoch}]"
    for dense, sparse, target in metric_logger.log_every(loader, print_freq, header):
        logits = model(dense, sparse)
        loss = F.binary_cross_entropy_with_logits(logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metric_logger.update(loss=loss, lr=optimizer.param_groups[0]["lr"])
    metric_logger.synchronize_between_processes()
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total_loss = torch.zeros((), device=next(model.parameters()).device)
    batches = 0
    for dense, sparse, target in loader:
        total_loss += F.binary_cross_entropy_with_logits(model(dense, sparse), target)
        batches += 1
    return {"val_loss": (total_loss / max(batches, 1)).item()}

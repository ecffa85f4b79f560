import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from utils.dist import all_mean
from utils.misc import MetricLogger


def _log_step(epoch, step, loss):
    print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


def train_one_epoch(model, loader, optimizer, device, epoch, cfg):
    model.train()
    metric_logger = MetricLogger()
    device_loader = pl.MpDeviceLoader(loader, device)
    for step, (inputs, targets) in enumerate(device_loader):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = model(inputs, targets)
        loss.backward()
        xm.optimizer_step(optimizer)
        metric_logger.update(loss=loss)
        if step % cfg.log_every == 0:
            xm.add_step_closure(_log_step, args=(epoch, step, loss))
    return metric_logger


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    total, batches = 0.0, 0
    for inputs, targets in pl.MpDeviceLoader(loader, device):
        total += model(inputs, targets).item()
        batches += 1
    return all_mean("val_loss", total / max(batches, 1))

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm

from utils.misc import SmoothedValue


def train_one_epoch(model, data_loader, optimizer, scheduler, epoch):
    model.train()
    loss_meter = SmoothedValue()
    for images, targets in data_loader:
        optimizer.zero_grad(set_to_none=True)
        outputs = model(images)
        loss = F.cross_entropy(outputs, targets, label_smoothing=0.1)
        loss.backward()
        xm.optimizer_step(optimizer, barrier=True)  # expect: XLA204
        scheduler.step()
        loss_meter.update(loss.detach(), n=images.size(0))
    return loss_meter


@torch.no_grad()
def evaluate(model, data_loader):
    model.eval()
    correct = torch.zeros((), device=torch_xla.device())
    total = 0
    for images, targets in data_loader:
        preds = model(images).argmax(dim=1)
        correct += (preds == targets).sum()
        total += targets.size(0)
    correct = xm.all_reduce(xm.REDUCE_SUM, correct)
    return correct.item(), total

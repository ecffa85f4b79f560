"""The training loop shared by every registered trainer."""
import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .checkpoint import save_checkpoint
from .meters import SmoothedValue

# the learning rate in the configs is per replica; scale it once here
WORLD_SIZE = xr.world_size()  # expect: XLA003


class BaseTrainer:
    """Owns the model and the optimizer; subclasses say how a loss is computed and applied."""

    log_every = 50

    def __init__(self, model, cfg):
        self.cfg = cfg
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr * WORLD_SIZE,
                                           weight_decay=cfg.weight_decay)
        self.loss_meter = SmoothedValue()
        self.step = 0

    def compute_loss(self, batch):
        images, labels = batch
        return F.cross_entropy(self.model(images), labels)

    def optimizer_step(self):
        self.optimizer.step()

    def train_epoch(self, loader, epoch):
        self.model.train()
        self.loss_meter.reset()
        for images, labels in pl.MpDeviceLoader(loader, self.device):
            self.optimizer.zero_grad(set_to_none=True)
            loss = self.compute_loss((images, labels))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_norm)  # expect: XLA203
            self.optimizer_step()
            self.loss_meter.update(loss.detach())
            self.step += 1
            if self.step % self.log_every == 0:
                xm.add_step_closure(self._report, args=(epoch, self.step, loss))
        xm.master_print(f"epoch {epoch} done, loss {self.loss_meter}")

    def _report(self, epoch, step, loss):
        print(f"[{xr.global_ordinal()}] epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)

    def evaluate(self, loader):
        self.model.eval()
        correct = torch.zeros((), device=self.device)
        seen = 0
        with torch.no_grad():
            for images, labels in pl.MpDeviceLoader(loader, self.device):
                correct += (self.model(images).argmax(dim=1) == labels).sum()
                seen += labels.size(0)
        local_acc = correct.item() / max(seen, 1)
        return xm.mesh_reduce("val_acc", local_acc, lambda values: sum(values) / len(values))

    def save(self, path):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": self.step}
        save_checkpoint(state, path)

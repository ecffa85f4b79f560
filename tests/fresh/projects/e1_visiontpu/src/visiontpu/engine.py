"""The training engine: one loop, callbacks dispatched by event name."""
import dataclasses

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm


@dataclasses.dataclass
class EngineConfig:
    epochs: int = 90
    log_every: int = 50
    label_smoothing: float = 0.1


class Engine:
    def __init__(self, model, optimizer, callbacks, cfg):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = optimizer
        self.callbacks = list(callbacks)
        self.cfg = cfg
        self.global_step = 0
        self.epoch = 0

    def fire(self, event, *args):
        for cb in self.callbacks:
            handler = getattr(cb, event, None)
            if handler is not None:
                handler(self, *args)

    def fit(self, train_loader, val_loader):
        self.fire("on_fit_start")
        for epoch in range(self.cfg.epochs):
            self.epoch = epoch
            self.train_one_epoch(train_loader)
            acc = self.evaluate(val_loader)
            self.fire("on_epoch_end", acc)
        self.fire("on_fit_end")

    def train_one_epoch(self, loader):
        self.model.train()
        for images, labels in loader:
            self.fire("on_step_begin")
            self.optimizer.zero_grad(set_to_none=True)
            logits = self.model(images)
            loss = F.cross_entropy(logits, labels, label_smoothing=self.cfg.label_smoothing)
            loss.backward()
            self.fire("on_after_backward", loss)
            xm.optimizer_step(self.optimizer, barrier=True)  # expect: XLA204
            self.global_step += 1
            self.fire("on_step_end", loss.detach())

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        correct = torch.zeros((), device=self.device)
        total = 0
        for images, labels in loader:
            correct += (self.model(images).argmax(-1) == labels).sum()
            total += labels.size(0)
        xm.mark_step()  # expect: XLA805
        local_acc = correct.item() / max(total, 1)
        return xm.mesh_reduce("val_acc", local_acc, lambda accs: sum(accs) / len(accs))

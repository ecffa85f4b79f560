import os

import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Runner:
    def __init__(self, model, optimizer, train_loader, device, hooks, max_epochs):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.device = device
        self.hooks = hooks
        self.max_epochs = max_epochs
        self.epoch = 0
        self.iter = 0
        self.last_loss = None
        self.val_correct = None

    def current_lr(self):
        return self.optimizer.param_groups[0]["lr"]

    def train_iter(self, images, labels):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(images), labels)
        loss.backward()
        self.optimizer.step()  # expect: XLA201
        self.last_loss = loss.detach()

    def run(self):
        for hook in self.hooks:
            hook.before_run(self)
        device_loader = pl.MpDeviceLoader(self.train_loader, self.device)
        for epoch in range(self.max_epochs):
            self.epoch = epoch
            for images, labels in device_loader:
                self.train_iter(images, labels)
                self.iter += 1
                for hook in self.hooks:
                    hook.after_train_iter(self)
            for hook in self.hooks:
                hook.after_train_epoch(self)

    def save_checkpoint(self, out_dir):
        path = os.path.join(out_dir, f"epoch_{self.epoch}.pt")
        xm.save({"model": self.model.state_dict(), "epoch": self.epoch}, path)

import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from .data import evaluate
from .plugins import HookRegistry


def place_model(model, device):
    return model.to(device)


class TrainLoop:
    def __init__(self, model, optimizer, train_loader, val_loader, device, plugins=(), epochs=1, log_every=50):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.device = device
        self.epochs = epochs
        self.log_every = log_every
        self.rank = xr.global_ordinal()
        self.is_master = xm.is_master_ordinal()
        self.hooks = HookRegistry(plugins)
        self.should_stop = False

    def train_epoch(self, epoch):
        self.model.train()
        for step, (images, labels) in enumerate(self.train_loader):
            images = images.to(self.device)
            labels = labels.to(self.device)
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(images), labels)
            loss.backward()
            xm.optimizer_step(self.optimizer)
            self.hooks.step_end(self, step, loss)
            torch_xla.sync()
            if step % self.log_every == 0 and self.rank == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
            if self.should_stop:
                break

    def save_checkpoint(self, path):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        xm.save(state, path)

    def fit(self):
        self.hooks.train_begin(self)
        for epoch in range(self.epochs):
            if hasattr(self.train_loader.sampler, "set_epoch"):
                self.train_loader.sampler.set_epoch(epoch)
            self.train_epoch(epoch)
            val_acc = evaluate(self.model, self.val_loader, self.device)
            self.hooks.epoch_end(self, epoch, val_acc)
            if self.should_stop:
                break

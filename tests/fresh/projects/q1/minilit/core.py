"""The module API, the base strategy and the fit loop. Device specifics live in a Strategy."""
import random

import numpy as np
import torch
from torch import nn


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # expect: XLA206


class LightningModule(nn.Module):
    """Subclass this and override the hooks you need."""

    def __init__(self):
        super().__init__()
        self.trainer = None
        self.logged_metrics = {}

    def log(self, name, value):
        self.logged_metrics[name] = value.detach() if torch.is_tensor(value) else value

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def validation_step(self, batch, batch_idx):
        return None

    def configure_optimizers(self):
        raise NotImplementedError

    def on_before_optimizer_step(self, optimizer):
        pass

    def on_train_batch_end(self, outputs, batch, batch_idx):
        pass

    def on_train_epoch_end(self):
        pass


class Strategy:
    """Single-process defaults; accelerator strategies override what differs."""

    root_device = torch.device("cpu")

    def setup(self):
        pass

    def is_global_zero(self):
        return True

    def setup_module(self, module):
        return module.to(self.root_device)

    def process_dataloader(self, loader):
        return loader

    def optimizer_step(self, optimizer, module):
        module.on_before_optimizer_step(optimizer)
        optimizer.step()

    def reduce_mean(self, value):
        return value

    def print(self, msg):
        print(msg, flush=True)

    def save_checkpoint(self, checkpoint, path):
        torch.save(checkpoint, path)


class CPUStrategy(Strategy):
    pass


class Trainer:
    def __init__(self, strategy, max_epochs=1, log_every_n_steps=50, ckpt_path=None):
        self.strategy = strategy
        self.max_epochs = max_epochs
        self.log_every_n_steps = log_every_n_steps
        self.ckpt_path = ckpt_path
        self.global_step = 0
        self.current_epoch = 0
        self.history = []

    def fit(self, module, datamodule):
        module.trainer = self
        self.strategy.setup()
        module = self.strategy.setup_module(module)
        optimizer = module.configure_optimizers()
        datamodule.setup()
        train_loader = self.strategy.process_dataloader(datamodule.train_dataloader())
        val_loader = self.strategy.process_dataloader(datamodule.val_dataloader())
        for epoch in range(self.max_epochs):
            self.current_epoch = epoch
            module.train()
            for batch_idx, batch in enumerate(train_loader):
                loss = module.training_step(batch, batch_idx)
                if loss is None:
                    continue
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.strategy.optimizer_step(optimizer, module)
                module.on_train_batch_end({"loss": loss}, batch, batch_idx)
                self.global_step += 1
                if self.global_step % self.log_every_n_steps == 0:
                    metrics = {k: v.item() for k, v in module.logged_metrics.items()}  # expect: XLA507
                    self.strategy.print(f"step {self.global_step}: {metrics}")
            module.on_train_epoch_end()
            val_loss = self.validate(module, val_loader)
            self.history.append(val_loss)
            self.strategy.print(f"epoch {epoch}: val_loss={val_loss:.4f}")
            if self.ckpt_path and self.strategy.is_global_zero():
                self.strategy.save_checkpoint({"state_dict": module.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, f"{self.ckpt_path}/epoch={epoch}.ckpt")  # expect: XLA602
        return self.history

    @torch.no_grad()
    def validate(self, module, loader):
        module.eval()
        total, count = 0.0, 0
        for batch_idx, batch in enumerate(loader):
            loss = module.validation_step(batch, batch_idx)
            total += loss.item()
            count += 1
        return self.strategy.reduce_mean(total / max(count, 1))

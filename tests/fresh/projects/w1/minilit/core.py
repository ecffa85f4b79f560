"""User-facing base classes: the module with its hooks and the data module."""
import torch.nn as nn


class LitModule(nn.Module):
    """Subclass and implement the hooks; the Trainer calls them."""

    def __init__(self):
        super().__init__()
        self.logged = {}

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def validation_step(self, batch, batch_idx):
        raise NotImplementedError

    def configure_optimizers(self):
        raise NotImplementedError

    def log(self, name, value):
        self.logged[name] = value


class DataModule:
    def setup(self, stage):
        pass

    def train_dataloader(self):
        raise NotImplementedError

    def val_dataloader(self):
        raise NotImplementedError

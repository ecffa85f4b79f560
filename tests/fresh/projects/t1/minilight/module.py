"""The user-facing base class (a subset of LightningModule's hooks)."""
from torch import nn


class LightModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.trainer = None

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def configure_optimizers(self):
        raise NotImplementedError

    def on_train_epoch_end(self, epoch):
        pass

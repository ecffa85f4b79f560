"""The user-facing base class: a torch module with training hooks."""
import torch.nn as nn


class LightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self._logged_metrics = {}
        self.trainer = None

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def configure_optimizers(self):
        raise NotImplementedError

    def train_dataloader(self):
        raise NotImplementedError

    def log(self, name, value, prog_bar=False):
        self._logged_metrics[name] = float(value)  # expect: XLA501
        if prog_bar and self.trainer is not None:
            self.trainer.progress_bar_metrics[name] = self._logged_metrics[name]

    @property
    def logged_metrics(self):
        return dict(self._logged_metrics)

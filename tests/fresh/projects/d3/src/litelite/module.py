"""LiteModule: the user's model plus the hooks the Trainer calls."""
import torch
import torch.nn as nn


class LiteModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.trainer = None
        self.logged = {}
        self._step_losses = []

    # -- what the user implements -------------------------------------------------
    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def validation_step(self, batch, batch_idx):
        return None

    def configure_optimizers(self):
        raise NotImplementedError

    def train_dataloader(self):
        raise NotImplementedError

    def val_dataloader(self):
        return None

    # -- logging --------------------------------------------------------------------
    def log(self, name, value, prog_bar=False):
        """Record a scalar; the Trainer prints `logged` at the end of each epoch."""
        if torch.is_tensor(value):
            value = value.detach().item()  # expect: XLA501
        self.logged[name] = value
        if prog_bar:
            self.logged.setdefault("_prog_bar", set()).add(name)

    # -- hooks: the Trainer calls module.call_hook("<name>", ...) -> self.on_<name>(...) --
    def call_hook(self, name, *args):
        hook = getattr(self, "on_" + name, None)
        if callable(hook):
            return hook(*args)
        return None

    def on_train_start(self):
        pass

    def on_train_batch_end(self, loss, batch, batch_idx):
        """Default: keep the step loss for the progress display."""
        self._step_losses.append(float(loss))

    def on_train_epoch_end(self, epoch):
        pass

    def on_validation_epoch_end(self, epoch):
        pass

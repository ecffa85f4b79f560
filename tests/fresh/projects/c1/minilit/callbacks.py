"""Callbacks: hooks the fit loop calls on every object in trainer.callbacks."""
import os

import torch_xla.core.xla_model as xm
from tqdm import tqdm


class Callback:
    def on_fit_start(self, trainer, module):
        pass

    def on_train_epoch_start(self, trainer, module):
        pass

    def on_train_batch_end(self, trainer, module, outputs, batch_idx):
        pass

    def on_train_epoch_end(self, trainer, module):
        pass


class ProgressBar(Callback):
    def __init__(self):
        self.bar = None

    def on_train_epoch_start(self, trainer, module):
        self.bar = tqdm(desc=f"epoch {trainer.current_epoch}", disable=not trainer.is_global_zero())

    def on_train_batch_end(self, trainer, module, outputs, batch_idx):
        self.bar.update(1)
        self.bar.set_postfix(loss=outputs["loss"].item(), **trainer.progress_bar_metrics)  # expect: XLA501

    def on_train_epoch_end(self, trainer, module):
        self.bar.close()


class LossMonitor(Callback):
    def __init__(self, every=50):
        self.every = every

    def _report(self, step, loss):
        print(f"step {step}: loss={loss.item():.4f}")

    def on_train_batch_end(self, trainer, module, outputs, batch_idx):
        if batch_idx % self.every == 0:
            xm.add_step_closure(self._report, args=(trainer.global_step, outputs["loss"]))


class ModelCheckpoint(Callback):
    def __init__(self, dirpath=None, filename="last.ckpt"):
        self.dirpath = dirpath
        self.filename = filename

    def on_fit_start(self, trainer, module):
        self.dirpath = self.dirpath or trainer.default_root_dir
        os.makedirs(self.dirpath, exist_ok=True)

    def on_train_epoch_end(self, trainer, module):
        path = os.path.join(self.dirpath, f"epoch={trainer.current_epoch}-{self.filename}")
        if trainer.is_global_zero():
            trainer.save_checkpoint(path)  # expect: XLA602

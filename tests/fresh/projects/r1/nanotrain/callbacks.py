"""Callbacks receive the trainer and are fired from BaseTrainer.fit."""
import json
import os


class Callback:
    def on_train_begin(self, trainer):
        pass

    def on_step_end(self, trainer, step, loss):
        pass

    def on_epoch_end(self, trainer, epoch, elapsed):
        pass


class LossLogger(Callback):
    def __init__(self, every=50):
        self.every = every

    def on_train_begin(self, trainer):
        if trainer.is_main_process():
            print(f"training for {trainer.config.epochs} epochs")

    def on_step_end(self, trainer, step, loss):
        if step % self.every == 0 and trainer.is_main_process():
            print(f"step {trainer.global_step:>7d}  loss {loss:.4f}")  # expect: XLA507

    def on_epoch_end(self, trainer, epoch, elapsed):
        if trainer.is_main_process():
            print(f"epoch {epoch} finished in {elapsed:.1f}s")


class MetricsHistory(Callback):
    """Keeps every step's loss and dumps the history once per epoch."""

    def __init__(self, path):
        self.path = path
        self.losses = []
        self.epoch_final = []

    def on_step_end(self, trainer, step, loss):
        self.losses.append(loss.item())  # expect: XLA501

    def on_epoch_end(self, trainer, epoch, elapsed):
        self.epoch_final.append(trainer.last_loss.item())
        if trainer.is_main_process():
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            with open(self.path, "w") as f:
                json.dump({"losses": self.losses, "epoch_final": self.epoch_final}, f)

"""Callbacks: the trainer calls them on every step and at the end of every epoch."""
import os


class Callback:
    def on_train_start(self, trainer, module):
        pass

    def on_train_batch_end(self, trainer, module, loss, batch_idx):
        pass

    def on_train_epoch_end(self, trainer, module):
        pass


class ProgressPrinter(Callback):
    def __init__(self):
        self.running = 0.0
        self.count = 0

    def on_train_batch_end(self, trainer, module, loss, batch_idx):
        self.running += loss.item()  # expect: XLA501
        self.count += 1

    def on_train_epoch_end(self, trainer, module):
        if trainer.is_global_zero:
            print(f"epoch {trainer.current_epoch}: running loss {self.running / max(self.count, 1):.4f}")
        self.running, self.count = 0.0, 0


class LearningRateMonitor(Callback):
    def __init__(self, every_n_steps=100):
        self.every_n_steps = every_n_steps

    def on_train_batch_end(self, trainer, module, loss, batch_idx):
        if trainer.global_step % self.every_n_steps == 0 and trainer.is_global_zero:
            lr = trainer.optimizer.param_groups[0]["lr"]
            print(f"step {trainer.global_step}: lr {lr:.3e}")


class EpochSummary(Callback):
    def on_train_epoch_end(self, trainer, module):
        mean = trainer.epoch_loss.item() / max(trainer.steps_in_epoch, 1)
        if trainer.is_global_zero:
            print(f"epoch {trainer.current_epoch} done: mean loss {mean:.4f}, {trainer.global_step} steps")


class ModelCheckpoint(Callback):
    def __init__(self, dirpath, every_n_epochs=1):
        self.dirpath = dirpath
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, trainer, module):
        if (trainer.current_epoch + 1) % self.every_n_epochs != 0:
            return
        path = os.path.join(self.dirpath, f"epoch={trainer.current_epoch}.ckpt")
        if trainer.is_global_zero:
            trainer.save_checkpoint(module, path)  # expect: XLA602

"""Callbacks receive the trainer and the module at fixed points of the loop."""
import os


class Callback:
    def on_train_batch_end(self, trainer, module, outputs, batch_idx):
        pass

    def on_validation_end(self, trainer, module, metrics):
        pass


class LossLogger(Callback):
    def __init__(self, every=100):
        self.every = every

    def on_train_batch_end(self, trainer, module, outputs, batch_idx):
        if batch_idx % self.every == 0:
            print(f"epoch {trainer.current_epoch} step {batch_idx} loss {outputs['loss']}")  # expect: XLA507

    def on_validation_end(self, trainer, module, metrics):
        if trainer.global_rank == 0:
            print(f"epoch {trainer.current_epoch} val_loss {metrics['val_loss']:.4f} ({metrics['epoch_time']:.0f}s)")


class ModelCheckpoint(Callback):
    def __init__(self, dirpath, monitor="val_loss"):
        self.dirpath = dirpath
        self.monitor = monitor
        self.best = float("inf")

    def on_validation_end(self, trainer, module, metrics):
        current = metrics[self.monitor]
        path = os.path.join(self.dirpath, f"epoch={trainer.current_epoch}.ckpt")
        if trainer.global_rank == 0:
            os.makedirs(self.dirpath, exist_ok=True)
            trainer.save_checkpoint(path, module)  # expect: XLA602
        if current < self.best:
            self.best = current
            trainer.save_checkpoint(os.path.join(self.dirpath, "best.ckpt"), module)

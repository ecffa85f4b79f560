"""Callbacks: hooks the Trainer calls after each batch and each epoch."""


class Callback:
    def on_train_batch_end(self, trainer, loss, batch_idx):
        pass

    def on_train_epoch_end(self, trainer, model, optimizer):
        pass


class ProgressPrinter(Callback):
    def __init__(self, every=50):
        self.every = every

    def on_train_batch_end(self, trainer, loss, batch_idx):
        if batch_idx % self.every == 0:
            print(f"step {trainer.global_step} loss {loss:.4f}")  # expect: XLA507


class EpochCheckpoint(Callback):
    def __init__(self, dirpath):
        self.dirpath = dirpath

    def on_train_epoch_end(self, trainer, model, optimizer):
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": trainer.global_step}
        if trainer.is_global_zero:
            trainer.strategy.save_checkpoint(state, f"{self.dirpath}/last.ckpt")  # expect: XLA602

"""TensorBoard scalars, written by the first replica only."""
from torch.utils.tensorboard import SummaryWriter


class TensorBoardLogger:
    def __init__(self, logdir, every=50):
        self.logdir = logdir
        self.every = every
        self.writer = None

    @classmethod
    def from_args(cls, logdir="runs", **kwargs):
        return cls(logdir)

    def on_fit_start(self, engine):
        import torch_xla.runtime as xr

        if xr.global_ordinal() == 0:
            self.writer = SummaryWriter(self.logdir)

    def on_step_end(self, engine, loss):
        if self.writer is not None and engine.global_step % self.every == 0:
            self.writer.add_scalar("train/loss", loss.item(), engine.global_step)  # expect: XLA507
            self.writer.add_scalar("train/lr", engine.optimizer.param_groups[0]["lr"], engine.global_step)

    def on_epoch_end(self, engine, acc):
        if self.writer is not None:
            self.writer.add_scalar("val/acc", acc, engine.epoch)

    def on_fit_end(self, engine):
        if self.writer is not None:
            self.writer.close()

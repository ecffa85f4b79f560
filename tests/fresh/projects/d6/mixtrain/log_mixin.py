"""LoggingMixin: TensorBoard scalars and console lines."""
import torch_xla.core.xla_model as xm


class LoggingMixin:
    log_every = 25

    def setup_logging(self, log_dir):
        self._writer = None
        if xm.is_master_ordinal():  # expect: XLA604
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(log_dir)

    def log_step(self, loss):
        if self._writer is not None and self.global_step % self.log_every == 0:
            self._writer.add_scalar("train/loss", loss.item(), self.global_step)  # expect: XLA507

    def log_epoch(self, epoch, train_acc, val_acc, worst_batch):
        xm.master_print(f"epoch {epoch}: train acc {train_acc:.4f}  val acc {val_acc:.4f}  "
                        f"worst val batch {worst_batch:.3f}")
        if self._writer is not None:
            self._writer.add_scalar("train/acc", train_acc, epoch)
            self._writer.add_scalar("val/acc", val_acc, epoch)
            self._writer.flush()

"""TPU behaviour for any loop: mix in before BaseLoop."""
import torch_xla
import torch_xla.core.xla_model as xm


class XlaLoopMixin:
    def setup_device(self):
        return torch_xla.device()

    def optimizer_step(self):
        # all-reduce the gradients across replicas and apply them
        xm.optimizer_step(self.optimizer)
        # keep the base loop's scheduler and zero_grad
        super().optimizer_step()

    def after_step(self, loss):
        super().after_step(loss)
        if self.step % self.cfg.log_every == 0:
            xm.add_step_closure(self._report, args=(self.step, loss))

    def _report(self, step, loss):
        lr = self.scheduler.get_last_lr()[0]
        xm.master_print(f"step {step} loss {loss.item():.4f} lr {lr:.2e}")

    def on_fit_end(self):
        super().on_fit_end()
        xm.wait_device_ops()

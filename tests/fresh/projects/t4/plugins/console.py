import time

import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from plugins import Plugin


class ConsoleLogger(Plugin):
    def __init__(self, every=20):
        self.every = every

    def on_step_end(self, trainer, step, loss):
        if step % self.every == 0:
            xm.master_print(f"step {trainer.global_step} loss {loss:.4f}")  # expect: XLA507


class LossHistory(Plugin):
    def __init__(self):
        self.values = []

    def on_step_end(self, trainer, step, loss):
        self.values.append(float(loss))  # expect: XLA501

    def on_epoch_end(self, trainer, epoch):
        if trainer.is_main and self.values:
            print(f"epoch {epoch}: min loss {min(self.values):.4f}, last {self.values[-1]:.4f}")


class Throughput(Plugin):
    def __init__(self, batch_size):
        self.batch_size = batch_size
        self.samples = 0
        self.t0 = None

    def on_train_start(self, trainer):
        self.t0 = time.perf_counter()

    def on_step_end(self, trainer, step, loss):
        self.samples += self.batch_size

    def on_epoch_end(self, trainer, epoch):
        xm.wait_device_ops()
        rate = self.samples / (time.perf_counter() - self.t0)
        if xr.global_ordinal() == 0:
            print(f"epoch {epoch}: {rate:.1f} samples/s per replica")

"""Metric and logging callbacks."""
import time

import numpy as np

from .events import Callback


class ThroughputCallback(Callback):
    order = -10  # first in every event, so the clock stops before any other callback runs

    def __init__(self, batch_size, every=100):
        self.batch_size = batch_size
        self.every = every
        self.t0 = None

    def on_step_begin(self, learn):
        self.t0 = time.perf_counter()

    def on_step_end(self, learn):
        dt = time.perf_counter() - self.t0  # expect: XLA504
        if learn.step % self.every == 0:
            print(f"[throughput] {self.batch_size / dt:.1f} samples/s", flush=True)


class MetricsCallback(Callback):
    """Keeps the running loss on the device and reads it once per epoch."""

    def on_epoch_begin(self, learn):
        self.total = None
        self.count = 0

    def on_step_end(self, learn):
        loss = learn.loss.detach()
        self.total = loss if self.total is None else self.total + loss
        self.count += 1

    def on_epoch_end(self, learn):
        learn.history.append(self.total.item() / max(self.count, 1))


class ConfusionCallback(Callback):
    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.matrix = np.zeros((num_classes, num_classes), dtype=np.int64)

    def on_epoch_begin(self, learn):
        self.matrix[:] = 0

    def on_step_end(self, learn):
        np.add.at(self.matrix, (learn.target.cpu().numpy(), learn.output.argmax(dim=1).cpu().numpy()), 1)  # expect: XLA501

    def on_epoch_end(self, learn):
        per_class = self.matrix.diagonal() / np.maximum(self.matrix.sum(axis=1), 1)
        print("train accuracy per class:", np.round(per_class, 3).tolist())


class LRMonitor(Callback):
    def __init__(self, every=100):
        self.every = every

    def on_step_end(self, learn):
        if learn.step % self.every == 0:
            lr = learn.opt.param_groups[0]["lr"]
            print(f"step {learn.step} lr {lr:.3e}")


class ProgressCallback(Callback):
    def __init__(self, every=50):
        self.every = every

    def on_step_end(self, learn):
        if learn.step % self.every == 0:
            print(f"epoch {learn.epoch} step {learn.step} loss {learn.loss.item():.4f}")  # expect: XLA507

"""The Learner owns the model, the optimizer and the loop; callbacks do everything else."""
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from .events import CallbackHandler


class Learner:
    def __init__(self, model, train_loader, loss_fn, opt_func, lr, scheduler_func=None, callbacks=()):
        self.device = xm.xla_device()  # expect: XLA804
        self.model = model.to(self.device)
        self.opt = opt_func(self.model.parameters(), lr=lr)
        self.scheduler = scheduler_func(self.opt) if scheduler_func is not None else None
        self.train_loader = train_loader
        self.loss_fn = loss_fn
        self.cbs = CallbackHandler(callbacks)
        self.history = []
        self.step = 0
        self.epoch = 0
        self.stop = False
        self.output = self.target = self.loss = None

    def fit(self, epochs):
        device_loader = pl.MpDeviceLoader(self.train_loader, self.device)
        self.cbs.on_train_begin(self)
        for epoch in range(epochs):
            self.epoch = epoch
            self.model.train()
            if hasattr(self.train_loader.sampler, "set_epoch"):
                self.train_loader.sampler.set_epoch(epoch)
            self.cbs.on_epoch_begin(self)
            for xb, yb in device_loader:
                self.cbs.on_step_begin(self)
                self.output = self.model(xb)
                self.target = yb
                self.loss = self.loss_fn(self.output, yb)
                self.opt.zero_grad()
                self.loss.backward()
                self.cbs.after_backward(self)
                xm.optimizer_step(self.opt)
                if self.scheduler is not None:
                    self.scheduler.step()
                self.step += 1
                self.cbs.on_step_end(self)
                if self.stop:
                    break
            self.cbs.on_epoch_end(self)
            if self.stop:
                break
        self.cbs.on_train_end(self)
        return self.history

from types import SimpleNamespace

import torch.nn.functional as F
import torch_xla.core.xla_model as xm


class Engine:
    def __init__(self, model, optimizer, loader, callbacks=()):
        self.model, self.optimizer, self.loader = model, optimizer, loader
        self.callbacks = list(callbacks)
        self.state = SimpleNamespace(epoch=0, step=0, loss=None)

    def _fire(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def fit(self, epochs):
        self._fire("on_fit_start")
        for epoch in range(epochs):
            self.state.epoch = epoch
            self.model.train()
            for step, (x, y) in enumerate(self.loader):
                self.optimizer.zero_grad()
                loss = F.cross_entropy(self.model(x), y)
                loss.backward()
                xm.optimizer_step(self.optimizer)
                self.state.step, self.state.loss = step, loss
                self._fire("on_step_end")
            self._fire("on_epoch_end")
        self._fire("on_fit_end")

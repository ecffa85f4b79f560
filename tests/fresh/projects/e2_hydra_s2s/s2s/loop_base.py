"""A backend-agnostic training loop. Mixins and tasks override the hooks and call super()."""
import contextlib
import math

import torch


class BaseLoop:
    def __init__(self, model, cfg):
        self.cfg = cfg
        self.step = 0
        self.device = self.setup_device()
        self.model = model.to(self.device)
        if hasattr(self.model, "tie_weights"):
            self.model.tie_weights()
        self.optimizer = self.configure_optimizer()
        self.scheduler = self.configure_scheduler()

    def setup_device(self):
        return torch.device("cpu")

    def configure_optimizer(self):
        decay, no_decay = [], []
        for name, p in self.model.named_parameters():
            (no_decay if p.ndim < 2 or "norm" in name else decay).append(p)
        groups = [
            {"params": decay, "weight_decay": self.cfg.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=self.cfg.lr)

    def configure_scheduler(self):
        warmup, total = self.cfg.warmup_steps, self.cfg.max_steps

        def lr_lambda(step):
            if step < warmup:
                return step / max(1, warmup)
            return 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))

        return torch.optim.lr_scheduler.LambdaLR(self.optimizer, lr_lambda)

    def autocast(self):
        return contextlib.nullcontext()

    def compute_loss(self, batch):
        raise NotImplementedError

    def backward(self, loss):
        loss.backward()

    def clip_gradients(self):
        if self.cfg.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)  # expect: XLA203

    def optimizer_step(self):
        self.optimizer.step()  # expect: XLA207
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)

    def after_step(self, loss):
        self.step += 1

    def on_fit_end(self):
        pass

    def fit(self, loader):
        self.model.train()
        for batch in loader:
            with self.autocast():
                loss = self.compute_loss(batch)
            self.backward(loss)
            self.clip_gradients()
            self.optimizer_step()
            self.after_step(loss)
            if self.step >= self.cfg.max_steps:
                break
        self.on_fit_end()

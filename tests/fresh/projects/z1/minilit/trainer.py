"""The generic fit loop. Knows nothing about accelerators: it asks its strategy."""
import torch

from .strategies import CPUStrategy


class Trainer:
    def __init__(self, strategy=None, max_epochs=1, callbacks=None, gradient_clip_val=None):
        self.strategy = strategy or CPUStrategy()
        self.max_epochs = max_epochs
        self.callbacks = list(callbacks or [])
        self.gradient_clip_val = gradient_clip_val
        self.global_step = 0

    @property
    def is_global_zero(self):
        return self.strategy.is_global_zero

    def fit(self, module, train_loader):
        if self.strategy.launcher is not None:
            self.strategy.launcher.launch(self._run, module, train_loader)
        else:
            self._run(module, train_loader)

    def _run(self, module, train_loader):
        model = self.strategy.setup_module(module)
        optimizer = model.configure_optimizers()
        loader = self.strategy.process_dataloader(train_loader)
        model.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(loader):
                optimizer.zero_grad()
                loss = model.training_step(batch, batch_idx)
                loss.backward()
                if self.gradient_clip_val:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.gradient_clip_val)  # expect: XLA203
                self.strategy.optimizer_step(optimizer)
                self.global_step += 1
                for callback in self.callbacks:
                    callback.on_train_batch_end(self, loss.detach(), batch_idx)
            for callback in self.callbacks:
                callback.on_train_epoch_end(self, model, optimizer)

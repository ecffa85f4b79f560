"""Base trainer: one process on the CPU or one GPU.

Accelerator trainers (``minilight.xla.XLATrainer``) override the hooks in the first half of
the class; the loop in ``_run`` is shared by all of them.
"""
import os
import random

import numpy as np
import torch


def _run_fit(index, trainer, module, datamodule):
    trainer._run(module, datamodule)


class Trainer:
    def __init__(self, max_epochs=1, callbacks=None, gradient_clip_val=None, seed=None):
        self.max_epochs = max_epochs
        self.callbacks = list(callbacks or [])
        self.gradient_clip_val = gradient_clip_val
        self.seed = seed
        self.current_epoch = 0
        self.global_step = 0
        self.steps_in_epoch = 0
        self.epoch_loss = None
        self.optimizer = None

    # ---- hooks that accelerator trainers override ----
    @property
    def world_size(self):
        return 1

    @property
    def global_rank(self):
        return 0

    @property
    def is_global_zero(self):
        return self.global_rank == 0

    def root_device(self):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def seed_everything(self, seed):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)

    def launch(self, module, datamodule):
        _run_fit(0, self, module, datamodule)

    def setup_module(self, module):
        return module.to(self.root_device())

    def process_dataloader(self, loader):
        return loader

    def optimizer_step(self, optimizer):
        optimizer.step()

    def save_checkpoint(self, module, path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save({"state_dict": module.state_dict(), "epoch": self.current_epoch}, path)

    # ---- the loop ----
    def fit(self, module, datamodule):
        self.launch(module, datamodule)

    def _run(self, module, datamodule):
        if self.seed is not None:
            self.seed_everything(self.seed)
        module.trainer = self
        module = self.setup_module(module)
        optimizer = self.optimizer = module.configure_optimizers()
        datamodule.setup()
        loader = datamodule.train_dataloader(self.world_size, self.global_rank)
        loader = self.process_dataloader(loader)
        for cb in self.callbacks:
            cb.on_train_start(self, module)
        for epoch in range(self.max_epochs):
            self.current_epoch = epoch
            self.steps_in_epoch = 0
            self.epoch_loss = torch.zeros((), device=self.root_device())
            module.train()
            for batch_idx, batch in enumerate(loader):
                optimizer.zero_grad(set_to_none=True)
                loss = module.training_step(batch, batch_idx)
                loss.backward()
                if self.gradient_clip_val:
                    torch.nn.utils.clip_grad_norm_(module.parameters(), self.gradient_clip_val)  # expect: XLA203
                self.optimizer_step(optimizer)
                self.epoch_loss += loss.detach()
                self.steps_in_epoch += 1
                self.global_step += 1
                for cb in self.callbacks:
                    cb.on_train_batch_end(self, module, loss, batch_idx)
            module.on_train_epoch_end(epoch)
            for cb in self.callbacks:
                cb.on_train_epoch_end(self, module)

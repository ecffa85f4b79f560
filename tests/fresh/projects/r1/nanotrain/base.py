"""Device-agnostic training loop.

Back-ends subclass BaseTrainer and override the hooks (setup_device,
train_dataloader, optimizer_step, is_main_process).  The loop itself lives
here and is shared by every back-end.
"""
import os
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


@dataclass
class TrainerConfig:
    batch_size: int = 32
    epochs: int = 3
    lr: float = 3e-4
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    output_dir: str = "checkpoints"


class BaseTrainer:
    def __init__(self, model, dataset, config, callbacks=None):
        self.config = config
        self.dataset = dataset
        self.callbacks = list(callbacks or [])
        self.device = self.setup_device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=config.lr, weight_decay=config.weight_decay
        )
        self.global_step = 0
        self.last_loss = None

    # ------------------------------------------------------------------ hooks
    def setup_device(self):
        return torch.device("cuda")

    def is_main_process(self):
        return True

    def train_dataloader(self):
        return DataLoader(
            self.dataset, batch_size=self.config.batch_size, shuffle=True, drop_last=True
        )

    def optimizer_step(self):
        self.optimizer.step()

    def training_step(self, batch):
        inputs, targets = batch
        logits = self.model(inputs)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def save_checkpoint(self, name):
        os.makedirs(self.config.output_dir, exist_ok=True)
        path = os.path.join(self.config.output_dir, name)
        torch.save({"model": self.model.state_dict(), "step": self.global_step}, path)  # expect: XLA601

    # ------------------------------------------------------------------- loop
    def fit(self):
        for cb in self.callbacks:
            cb.on_train_begin(self)
        for epoch in range(self.config.epochs):
            self.model.train()
            start = time.time()
            for step, batch in enumerate(self.train_dataloader()):
                self.optimizer.zero_grad(set_to_none=True)
                loss = self.training_step(batch)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)  # expect: XLA203
                self.optimizer_step()
                self.global_step += 1
                self.last_loss = loss.detach()
                for cb in self.callbacks:
                    cb.on_step_end(self, step, loss)
            elapsed = time.time() - start
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, elapsed)
        self.save_checkpoint("final.pt")

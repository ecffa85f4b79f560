"""The device-agnostic training loop. Backends subclass Trainer and override its device hooks."""
import math
import os

import torch
from torch.utils.data import DataLoader

from .checkpoint_mixin import CheckpointMixin
from .logging_mixin import LoggingMixin


class Trainer(LoggingMixin, CheckpointMixin):
    def __init__(self, model, args, train_dataset, eval_dataset=None, data_collator=None):
        self.args = args
        self.model = model
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.data_collator = data_collator
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay
        )
        self.global_step = 0
        self.epoch = 0

    # ---- device hooks (single CPU/GPU process by default) -------------------
    def is_world_process_zero(self):
        return True

    def is_local_process_zero(self):
        return True

    def get_train_dataloader(self):
        return DataLoader(
            self.train_dataset,
            batch_size=self.args.per_device_train_batch_size,
            shuffle=True,
            collate_fn=self.data_collator,
        )

    def get_eval_dataloader(self):
        return DataLoader(
            self.eval_dataset, batch_size=self.args.per_device_eval_batch_size, collate_fn=self.data_collator
        )

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
        self.optimizer.step()

    # ---- the loop ------------------------------------------------------------
    def compute_loss(self, model, batch):
        return model(**batch)["loss"]

    def training_step(self, batch):
        self.model.train()
        loss = self.compute_loss(self.model, batch)
        loss.backward()
        return loss.detach()

    def train(self):
        train_dataloader = self.get_train_dataloader()
        self.init_trackers()
        for epoch in range(self.args.num_train_epochs):
            self.epoch = epoch
            for batch in train_dataloader:
                loss = self.training_step(batch)
                self.optimizer_step()
                self.optimizer.zero_grad(set_to_none=True)
                self.global_step += 1
                self.log_step(loss)
            self.log(self.evaluate())
            if (epoch + 1) % self.args.save_every_epochs == 0:
                output_dir = os.path.join(self.args.output_dir, f"checkpoint-{self.global_step}")
                if self.is_world_process_zero():
                    self._save(output_dir)  # expect: XLA602
        self.finish_trackers()

    def evaluate(self):
        if self.eval_dataset is None:
            return {}
        self.model.eval()
        total, batches = 0.0, 0
        with torch.no_grad():
            for batch in self.get_eval_dataloader():
                total += self.compute_loss(self.model, batch).item()
                batches += 1
        loss = total / max(1, batches)
        return {"eval_loss": loss, "eval_ppl": math.exp(min(loss, 20.0))}

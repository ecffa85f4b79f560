import os
from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader, DistributedSampler

from .logging import MetricLogger


@dataclass
class TrainerConfig:
    batch_size: int = 32
    epochs: int = 3
    lr: float = 3e-4
    max_grad_norm: float = 1.0
    log_every: int = 25
    output_dir: str = "runs/default"


class Trainer:
    """Runs the loop; accelerators override the device-specific hooks."""

    def __init__(self, model, train_dataset, cfg, eval_dataset=None):
        self.model = model
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.cfg = cfg
        self.logger = MetricLogger(every=cfg.log_every)
        self.global_step = 0

    # ---- hooks an accelerator may override -------------------------------
    def get_device(self):
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))

    def world_size(self):
        return int(os.environ["WORLD_SIZE"])

    def rank(self):
        return int(os.environ["RANK"])

    def train_dataloader(self):
        sampler = DistributedSampler(
            self.train_dataset, num_replicas=self.world_size(), rank=self.rank(), shuffle=True
        )
        return DataLoader(self.train_dataset, batch_size=self.cfg.batch_size, sampler=sampler, num_workers=2)  # expect: XLA304

    def optimizer_step(self):
        self.optimizer.step()

    def save_checkpoint(self, path):
        torch.save({"model": self.model.state_dict(), "step": self.global_step}, path)

    def on_train_batch_end(self, loss):
        self.logger.log(self.global_step, loss)
        self.logger.maybe_print(self.global_step, loss)

    # ---- the loop ---------------------------------------------------------
    def setup(self):
        self.device = self.get_device()
        self.model = self.model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.cfg.lr)

    def training_step(self, batch):
        out = self.model(batch["input_ids"], batch["labels"])
        return out

    def fit(self):
        self.setup()
        for epoch in range(self.cfg.epochs):
            self.model.train()
            running = torch.zeros((), device=self.device)
            n = 0
            for batch in self.train_dataloader():
                self.optimizer.zero_grad()
                loss = self.training_step(batch)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)  # expect: XLA203
                self.optimizer_step()
                running += loss.detach()
                n += 1
                self.global_step += 1
                self.on_train_batch_end(loss.detach())
            epoch_loss = (running / max(n, 1)).item()
            print(f"epoch {epoch} mean loss {epoch_loss:.4f}")
            self.save_checkpoint(os.path.join(self.cfg.output_dir, f"epoch{epoch}.pt"))
        return self.evaluate()

    def evaluate(self):
        if self.eval_dataset is None:
            return None
        loader = DataLoader(self.eval_dataset, batch_size=self.cfg.batch_size)
        self.model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for batch in loader:
                ids = batch["input_ids"].to(self.device)
                labels = batch["labels"].to(self.device)
                total += self.model(ids, labels).item()
                count += 1
        return total / max(count, 1)

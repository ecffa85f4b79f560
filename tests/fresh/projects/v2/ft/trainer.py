import os
from dataclasses import dataclass

import torch
import torch.nn as nn

from .data import make_eval_loader, make_train_loader


@dataclass
class TrainingArguments:
    output_dir: str = "out"
    batch_size: int = 32
    lr: float = 3e-4
    epochs: int = 3
    max_grad_norm: float = 1.0
    logging_steps: int = 50


class Trainer:
    def __init__(self, model, args, train_dataset, eval_dataset=None):
        self.args = args
        self.device = self.setup_device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.lr)
        self.loss_fn = nn.CrossEntropyLoss()
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.global_step = 0
        self.history = []

    def setup_device(self):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def get_train_dataloader(self):
        return make_train_loader(self.train_dataset, self.args.batch_size)

    def get_eval_dataloader(self):
        return make_eval_loader(self.eval_dataset, self.args.batch_size)

    def training_step(self, batch):
        batch = {k: v.to(self.device) for k, v in batch.items()}
        logits = self.model(batch["input_ids"], batch["offsets"])
        loss = self.loss_fn(logits, batch["labels"])
        loss.backward()
        return loss.detach()

    def optimizer_step(self):
        self.optimizer.step()

    def log(self, logs):
        self.history.append({"step": self.global_step, **logs})
        print(logs)

    def train(self):
        self.model.train()
        for epoch in range(self.args.epochs):
            for batch in self.get_train_dataloader():
                self.optimizer.zero_grad()
                loss = self.training_step(batch)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)  # expect: XLA203
                self.optimizer_step()
                self.global_step += 1
                if self.global_step % self.args.logging_steps == 0:
                    self.log({"loss": loss.item(), "epoch": epoch})  # expect: XLA507
            self.save_checkpoint(os.path.join(self.args.output_dir, f"epoch{epoch}.pt"))

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        correct, seen = 0, 0
        for batch in self.get_eval_dataloader():
            batch = {k: v.to(self.device) for k, v in batch.items()}
            preds = self.model(batch["input_ids"], batch["offsets"]).argmax(-1)
            correct += (preds == batch["labels"]).sum().item()
            seen += batch["labels"].numel()
        return correct / max(seen, 1)

    def save_checkpoint(self, path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save({"model": self.model.state_dict(), "step": self.global_step}, path)  # expect: XLA601

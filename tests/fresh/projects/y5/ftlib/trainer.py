"""Device-agnostic Trainer. Subclasses override the hooks that depend on the accelerator."""
import dataclasses

import torch
from torch.utils.data import DataLoader

from .accum import GradAccumulator


@dataclasses.dataclass
class TrainingArguments:
    output_dir: str = "out"
    per_device_train_batch_size: int = 8
    per_device_eval_batch_size: int = 32
    gradient_accumulation_steps: int = 4
    learning_rate: float = 2e-5
    num_train_epochs: int = 3
    max_grad_norm: float = 1.0
    logging_steps: int = 25
    save_steps: int = 500
    seed: int = 42


class Trainer:
    def __init__(self, model, args, train_dataset, eval_dataset=None, callbacks=()):
        self.args = args
        self.model = model
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.callbacks = list(callbacks)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.learning_rate)  # expect: XLA405
        self.accumulator = GradAccumulator(args.gradient_accumulation_steps)
        self.global_step = 0

    def is_world_process_zero(self):
        return True

    def is_local_process_zero(self):
        return True

    def get_train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size, shuffle=True)

    def compute_loss(self, model, inputs):
        return model(**inputs)["loss"]

    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        self.accumulator.backward(loss)
        return loss.detach()

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
        self.optimizer.step()

    def save_model(self, output_dir):
        torch.save(self.model.state_dict(), f"{output_dir}/pytorch_model.bin")

    def train(self):
        loader = self.get_train_dataloader()
        for cb in self.callbacks:
            cb.on_train_begin(self)
        for epoch in range(self.args.num_train_epochs):
            for inputs in loader:
                self.training_step(self.model, inputs)
                if self.accumulator.ready():
                    self.optimizer_step()
                    self.optimizer.zero_grad(set_to_none=True)
                    self.global_step += 1
                    logs = {"loss": self.accumulator.pop_mean(), "step": self.global_step, "epoch": epoch}
                    for cb in self.callbacks:
                        cb.on_step_end(self, logs)
        for cb in self.callbacks:
            cb.on_train_end(self)

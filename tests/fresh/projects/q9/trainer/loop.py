import os
from dataclasses import dataclass, field

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


@dataclass
class TrainerState:
    epoch: int = 0
    global_step: int = 0
    should_stop: bool = False
    log_history: list = field(default_factory=list)


class Trainer:
    def __init__(self, model, optimizer_cls, train_loader, handler, lr=1e-3, epochs=5, output_dir="out"):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = optimizer_cls(self.model.parameters(), lr=lr)
        self.train_loader = train_loader
        self.handler = handler
        self.epochs = epochs
        self.output_dir = output_dir
        self.state = TrainerState()

    def save_checkpoint(self, path):
        xm.save({"model": self.model.state_dict(), "step": self.state.global_step}, path)

    def train(self):
        self.handler.fire("on_train_begin", self)
        device_loader = pl.MpDeviceLoader(self.train_loader, self.device)
        for epoch in range(self.epochs):
            self.state.epoch = epoch
            self.model.train()
            for inputs, targets in device_loader:
                self.optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(self.model(inputs), targets)
                loss.backward()
                xm.optimizer_step(self.optimizer)
                self.state.global_step += 1
                self.handler.fire("on_step_end", self, loss=loss.detach())
                if self.state.should_stop:
                    break
            self.handler.fire("on_epoch_end", self)
        self.handler.fire("on_train_end", self)
        self.save_checkpoint(os.path.join(self.output_dir, "last.pt"))

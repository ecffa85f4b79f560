"""Shared training skeleton; data-parallel flavours subclass it and override the hooks."""
import time

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from data import build_train_loader
from ema import ModelEma
from model import ConvNet


class TrainBase:
    def __init__(self, cfg):
        self.cfg = cfg
        torch.manual_seed(cfg.seed)  # expect: XLA206
        self.device = torch_xla.device()
        self.train_loader = build_train_loader(cfg)
        self.model = ConvNet(cfg).to(self.device)
        self.raw_model = self.model
        self.ema = ModelEma(self.model, cfg.ema_decay)
        self.optimizer = torch.optim.SGD(
            self.model.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay
        )
        self.loss_fn = nn.CrossEntropyLoss()

    def _train_update(self, epoch, step, loss):
        print(f"epoch {epoch} step {step} loss {loss.item():.4f} rank {xr.global_ordinal()}")

    def run_optimizer(self):
        xm.optimizer_step(self.optimizer)  # expect: XLA108

    def save_checkpoint(self, epoch):
        torch.save(self.model.state_dict(), f"{self.cfg.ckpt_dir}/model-{epoch}.pt")

    def train_loop_fn(self, loader, epoch):
        self.model.train()
        for step, (data, target) in enumerate(loader):
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.loss_fn(output, target)
            loss.backward()
            self.run_optimizer()
            self.ema.update(self.raw_model)
            if step % self.cfg.log_steps == 0:
                xm.add_step_closure(self._train_update, args=(epoch, step, loss))

    def start_training(self):
        loader = pl.MpDeviceLoader(self.train_loader, self.device)
        for epoch in range(1, self.cfg.num_epochs + 1):
            xm.master_print(f"Epoch {epoch} train begin {time.strftime('%H:%M:%S')}")
            self.train_loop_fn(loader, epoch)
            xm.master_print(f"Epoch {epoch} train end {time.strftime('%H:%M:%S')}")
            self.save_checkpoint(epoch)
            if xr.global_ordinal() == 0:
                self.ema.save(f"{self.cfg.ckpt_dir}/ema-{epoch}.pt")
        xm.wait_device_ops()

"""The Trainer: FSDP-wrapped model, the training loop, and the mixins' services."""
from dataclasses import dataclass

import torch
import torch.nn.functional as F
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP

from .ckpt_mixin import CheckpointMixin
from .data_mixin import DataMixin
from .evaluation import evaluate
from .log_mixin import LoggingMixin
from .metrics import Accuracy


@dataclass
class TrainerConfig:
    epochs: int = 30
    batch_size: int = 64
    eval_batch_size: int = 128
    workers: int = 4
    lr: float = 1e-3
    weight_decay: float = 0.05
    max_grad_norm: float = 1.0
    seed: int = 0
    log_dir: str = "gs://my-team-bucket/mixtrain/tb"
    ckpt_dir: str = "gs://my-team-bucket/mixtrain/ckpt"


class Trainer(CheckpointMixin, LoggingMixin, DataMixin):
    def __init__(self, model_fn, train_set, val_set, cfg):
        self.cfg = cfg
        self.train_set, self.val_set = train_set, val_set
        self.device = xm.xla_device()  # expect: XLA804
        # a different init per replica is fine: FSDP keeps only this replica's shard of it
        seed = cfg.seed + xr.global_ordinal()
        torch.manual_seed(seed)
        torch_xla.manual_seed(seed)
        self.model = FSDP(model_fn().to(self.device), compute_dtype=torch.bfloat16)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.global_step = 0
        self.setup_logging(cfg.log_dir)

    def train_one_epoch(self, epoch):
        self.model.train()
        accuracy = Accuracy()
        for images, labels in self.train_batches(epoch):
            self.optimizer.zero_grad(set_to_none=True)
            logits = self.model(images)
            loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
            loss.backward()
            self.model.clip_grad_norm_(self.cfg.max_grad_norm)
            self.optimizer.step()
            accuracy.update(logits.detach(), labels)
            self.global_step += 1
            self.log_step(loss.detach())
        return accuracy.compute()

    def fit(self):
        for epoch in range(self.cfg.epochs):
            train_acc = self.train_one_epoch(epoch)
            val_acc, worst = evaluate(self.model, self.val_batches(), self.device)
            self.log_epoch(epoch, train_acc, val_acc, worst)
            self.save_checkpoint(epoch)
        xm.rendezvous("mixtrain.fit_end")

"""Image classification task for TPU: the loop comes from TrainLoopMixin."""
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler

from checkpointing import CheckpointMixin
from loops import TrainLoopMixin
from serve import Predictor


class TPUClassifier(TrainLoopMixin, CheckpointMixin):
    def __init__(self, model, train_set, val_set, cfg):
        self.cfg = cfg
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=1e-4)
        self.loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
        sampler = DistributedSampler(train_set, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
        train_loader = DataLoader(train_set, batch_size=cfg.batch_size, sampler=sampler, drop_last=True, num_workers=8)
        self.train_loader = pl.MpDeviceLoader(train_loader, self.device)
        self.val_loader = pl.MpDeviceLoader(DataLoader(val_set, batch_size=cfg.batch_size, num_workers=8), self.device)
        self.is_master = xm.is_master_ordinal()
        self.history = []

    def training_step(self, batch):
        images, labels = batch
        return self.loss_fn(self.model(images), labels)

    def after_backward(self, step):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_norm)  # expect: XLA203
        xm.optimizer_step(self.optimizer)

    def log_metrics(self, step, loss):
        self.history.append(loss.detach().cpu())  # expect: XLA501

    def evaluate(self):
        predictor = Predictor(self.model, self.device)
        correct, total = 0, 0
        for images, labels in self.val_loader:
            preds = predictor.predict_batch(images)
            correct += (preds == labels.cpu()).sum().item()
            total += labels.size(0)
        return xm.mesh_reduce("val_acc", correct / max(total, 1), lambda accs: sum(accs) / len(accs))

    def on_epoch_end(self, epoch):
        acc = self.evaluate()
        xm.master_print(f"epoch {epoch}: val acc {acc:.4f}")
        self.save_checkpoint(epoch, acc)

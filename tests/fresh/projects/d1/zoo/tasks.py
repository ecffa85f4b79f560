"""The registered trainers. Import this module to fill `zoo.registry.TRAINERS`."""
import torch
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

from .models import MODELS
from .registry import register_trainer
from .trainers import BaseTrainer


@register_trainer("classification")
class ClassificationTrainer(BaseTrainer):
    """Cross-entropy with label smoothing; gradients are averaged over the replicas."""

    def compute_loss(self, batch):
        images, labels = batch
        return F.cross_entropy(self.model(images), labels, label_smoothing=self.cfg.label_smoothing)

    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)


@register_trainer("distill")
class DistillTrainer(ClassificationTrainer):
    """Knowledge distillation from a frozen teacher built from the same registry."""

    def __init__(self, model, cfg):
        super().__init__(model, cfg)
        self.teacher = MODELS[cfg.teacher](cfg).to(self.device).eval()
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.temperature = cfg.temperature
        self.alpha = cfg.alpha

    def compute_loss(self, batch):
        images, labels = batch
        with torch.no_grad():
            teacher_logits = self.teacher(images)
        logits = self.model(images)
        t = self.temperature
        soft = F.kl_div(F.log_softmax(logits / t, dim=-1), F.softmax(teacher_logits / t, dim=-1),
                        reduction="batchmean") * t * t
        hard = F.cross_entropy(logits, labels)
        return self.alpha * soft + (1.0 - self.alpha) * hard

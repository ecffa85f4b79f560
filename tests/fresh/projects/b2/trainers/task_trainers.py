import torch.nn.functional as F
import torch_xla.core.xla_model as xm

from trainers.base_trainer import BaseTrainer


class LMTrainer(BaseTrainer):
    def compute_loss(self, batch):
        ids, labels = batch["input_ids"], batch["labels"]
        logits = self.model(ids)
        keep = labels != -100
        return F.cross_entropy(logits[keep], labels[keep])  # expect: XLA503

    def step_optimizer(self):
        xm.optimizer_step(self.optimizer)


class ClsTrainer(BaseTrainer):
    def compute_loss(self, batch):
        return F.cross_entropy(self.model(batch["input_ids"]), batch["label"])

    def step_optimizer(self):
        xm.optimizer_step(self.optimizer, barrier=True)  # expect: XLA204

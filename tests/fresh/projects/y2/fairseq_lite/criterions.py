"""Training criterions. Each returns (loss, sample_size, logging_output)."""
import torch.nn as nn
import torch.nn.functional as F

from . import register_criterion


def _logging_output(loss, sample):
    return {
        "loss": float(loss.detach()),  # expect: XLA501
        "ntokens": sample["ntokens"],
        "nsentences": sample["nsentences"],
    }


@register_criterion("cross_entropy")
class CrossEntropyCriterion(nn.Module):
    def __init__(self, padding_idx):
        super().__init__()
        self.padding_idx = padding_idx

    @classmethod
    def build_criterion(cls, cfg, task):
        return cls(task.dictionary.pad())

    def forward(self, model, sample, reduce=True):
        logits = model(**sample["net_input"])
        loss = F.cross_entropy(
            logits.flatten(0, 1),
            sample["target"].flatten(),
            ignore_index=self.padding_idx,
            reduction="sum" if reduce else "none",
        )
        return loss, sample["ntokens"], _logging_output(loss, sample)

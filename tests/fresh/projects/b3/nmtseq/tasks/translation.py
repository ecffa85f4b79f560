import torch
import torch.nn.functional as F

from nmtseq.tasks import register_task


@register_task("translation")
class TranslationTask:
    def __init__(self, args):
        self.args = args
        self.pad = 1

    def train_step(self, sample, model, criterion=None):
        logits = model(sample["src_tokens"], sample["prev_output_tokens"])
        loss = F.cross_entropy(logits.flatten(0, 1), sample["target"].flatten(),
                               ignore_index=self.pad, reduction="sum")
        loss.backward()
        return loss.detach(), sample["ntokens"]

    def batches(self, epoch):
        g = torch.Generator().manual_seed(epoch * 1000 + self.args.distributed_rank)
        for _ in range(self.args.updates_per_epoch):
            src = torch.randint(2, 1000, (self.args.max_sentences, 64), generator=g)
            tgt = torch.randint(2, 1000, (self.args.max_sentences, 64), generator=g)
            yield [{"src_tokens": src, "prev_output_tokens": tgt, "target": tgt, "ntokens": tgt.numel()}]

"""The seq2seq task: loss on the target tokens, bookkeeping of tokens seen."""
import torch
import torch.nn.functional as F

from .loop_base import BaseLoop
from .loop_xla import XlaLoopMixin


class Seq2SeqTrainer(XlaLoopMixin, BaseLoop):
    def __init__(self, model, tokenizer, cfg):
        self.tokenizer = tokenizer
        self.pad_id = tokenizer.pad_token_id
        self.tokens_seen = 0
        super().__init__(model, cfg)

    def autocast(self):
        return torch.autocast("xla", dtype=torch.float16)  # expect: XLA703

    def compute_loss(self, batch):
        out = self.model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=batch["decoder_input_ids"],
        )
        labels = batch["labels"]
        keep = labels != self.pad_id
        logits, targets = out.logits[keep], labels[keep]  # expect: XLA503
        return F.cross_entropy(logits.float(), targets, label_smoothing=self.cfg.label_smoothing)

    def after_step(self, loss):
        super().after_step(loss)
        self.tokens_seen += int(self.cfg.batch_size * self.cfg.max_target_len)

"""Collation to a fixed length (one compiled shape), teacher targets, and a token counter."""
import time

import torch


class PadCollate:
    def __init__(self, max_len, pad_id):
        self.max_len = max_len
        self.pad_id = pad_id

    def __call__(self, rows):
        ids = torch.full((len(rows), self.max_len), self.pad_id, dtype=torch.long)
        for i, row in enumerate(rows):
            n = min(self.max_len, row["input_ids"].numel())
            ids[i, :n] = row["input_ids"][:n]
        batch = {"input_ids": ids, "attention_mask": (ids != self.pad_id).long()}
        if "labels" in rows[0]:
            batch["labels"] = torch.stack([row["labels"] for row in rows])
        return batch


class DistillCollate:
    """Pads the batch, then attaches the teacher's token distribution as soft targets."""

    def __init__(self, teacher, pad, temperature=2.0):
        self.teacher = teacher
        self.pad = pad
        self.temperature = temperature

    def __call__(self, rows):
        batch = self.pad(rows)
        device = next(self.teacher.parameters()).device
        with torch.no_grad():
            logits = self.teacher(batch["input_ids"].to(device))
        batch["soft_labels"] = torch.softmax(logits / self.temperature, dim=-1)
        return batch


class TokenCounter:
    """Counts the non-padding tokens seen, for the tokens/s figure in the logs."""

    def __init__(self):
        self.tokens = 0
        self.t0 = time.perf_counter()

    def update(self, batch):
        self.tokens += int(batch["attention_mask"].sum())  # expect: XLA501

    def rate(self):
        return self.tokens / max(1e-6, time.perf_counter() - self.t0)

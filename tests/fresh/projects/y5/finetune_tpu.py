"""Distil a text classifier on a TPU VM (one process per chip).

    python finetune_tpu.py
"""
import os

os.environ["XLA_USE_BF16"] = "1"  # expect: XLA705

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla
from torch.utils.data import Dataset

from ftlib.callbacks import CheckpointCallback, LoggingCallback, PushToHubCallback
from ftlib.tpu import TpuTrainer
from ftlib.trainer import TrainingArguments

CONFIG = {
    "train": "data/train.pt",
    "eval": "data/eval.pt",
    "teacher": "ckpt/teacher.bin",
    "out": "out/distil",
    "repo": "acme/distil-classifier",
    "vocab": 30522,
    "seed": 17,
}


class TokenDataset(Dataset):
    def __init__(self, path):
        self.input_ids, self.labels = torch.load(path)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return {"input_ids": self.input_ids[index], "labels": self.labels[index]}


class TextClassifier(nn.Module):
    def __init__(self, vocab, dim, num_labels=2):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.head = nn.Linear(dim, num_labels)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.emb(input_ids))
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = F.cross_entropy(logits, labels)
        return out


class DistillTrainer(TpuTrainer):
    def __init__(self, model, args, train_dataset, eval_dataset=None, callbacks=(), teacher=None,
                 temperature=2.0, alpha=0.5):
        super().__init__(model, args, train_dataset, eval_dataset, callbacks)
        self.teacher = teacher.to(self.device).eval()
        self.temperature = temperature
        self.alpha = alpha

    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        with torch.no_grad():
            teacher_logits = self.teacher(inputs["input_ids"])["logits"]
        t = self.temperature
        kd = F.kl_div(F.log_softmax(outputs["logits"] / t, -1), F.softmax(teacher_logits / t, -1),
                      reduction="batchmean") * t * t
        assert torch.isfinite(kd), "distillation loss diverged"  # expect: XLA502
        return self.alpha * outputs["loss"] + (1.0 - self.alpha) * kd


def _mp_fn(index, cfg):
    torch_xla.manual_seed(cfg["seed"])
    train_ds = TokenDataset(cfg["train"])
    eval_ds = TokenDataset(cfg["eval"])
    student = TextClassifier(cfg["vocab"], 256)
    teacher = TextClassifier(cfg["vocab"], 768)
    teacher.load_state_dict(torch.load(cfg["teacher"], map_location="cpu"))
    args = TrainingArguments(output_dir=cfg["out"], seed=cfg["seed"])
    callbacks = [
        LoggingCallback(args.logging_steps),
        CheckpointCallback(args.output_dir, args.save_steps),
        PushToHubCallback(cfg["repo"], args.output_dir),
    ]
    trainer = DistillTrainer(student, args, train_ds, eval_ds, callbacks=callbacks, teacher=teacher)
    trainer.train()
    eval_loss = trainer.evaluate()
    if trainer.is_world_process_zero():
        print(f"eval loss {eval_loss:.4f}")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(CONFIG,))

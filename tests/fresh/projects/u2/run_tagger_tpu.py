"""Token tagging (NER-style) on TPU with tinytrainer.

    python run_tagger_tpu.py --data /data/conll_ids.pt --output-dir /tmp/tagger --report-to wandb
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla

from tinytrainer import TPUTrainer, TrainingArguments

IGNORE_INDEX = -100
MAX_LEN = 128


class TokenTagger(nn.Module):
    def __init__(self, vocab_size, num_labels, dim=256, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(MAX_LEN, dim))
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=4 * dim, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, num_labels)

    def forward(self, input_ids, attention_mask):
        h = self.embed(input_ids) + self.pos[: input_ids.size(1)]
        h = self.encoder(h, src_key_padding_mask=attention_mask.eq(0))
        return self.head(h)


class TaggingTrainer(TPUTrainer):
    def compute_loss(self, model, batch):
        logits = model(batch["input_ids"], batch["attention_mask"])
        labels = batch["labels"]
        keep = labels.ne(IGNORE_INDEX)
        return F.cross_entropy(logits[keep], labels[keep])  # expect: XLA503


def collate(rows):
    ids = torch.zeros(len(rows), MAX_LEN, dtype=torch.long)
    labels = torch.full((len(rows), MAX_LEN), IGNORE_INDEX, dtype=torch.long)
    for i, row in enumerate(rows):
        n = min(MAX_LEN, len(row["input_ids"]))
        ids[i, :n] = torch.as_tensor(row["input_ids"][:n])
        labels[i, :n] = torch.as_tensor(row["labels"][:n])
    return {"input_ids": ids, "attention_mask": (ids != 0).long(), "labels": labels}


def _mp_fn(index, args):
    data = torch.load(args.data)
    model = TokenTagger(data["vocab_size"], data["num_labels"])
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        logging_steps=args.logging_steps,
        report_to=args.report_to,
        run_name="tagger",
    )
    trainer = TaggingTrainer(model, training_args, data["train"], data["validation"], data_collator=collate)
    trainer.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--logging-steps", type=int, default=20)
    parser.add_argument("--report-to", default="none")
    torch_xla.launch(_mp_fn, args=(parser.parse_args(),))

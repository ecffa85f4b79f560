"""JSON-lines text classification data, tokenised to a fixed length with a word vocabulary."""
import json

import torch
from torch.utils.data import Dataset

PAD, UNK = 0, 1


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def build_vocab(rows, max_size=30000):
    counts = {}
    for row in rows:
        for word in row["text"].lower().split():
            counts[word] = counts.get(word, 0) + 1
    words = sorted(counts, key=counts.get, reverse=True)[: max_size - 2]
    return {w: i + 2 for i, w in enumerate(words)}


class JsonlTextDataset(Dataset):
    def __init__(self, path, max_len=256, vocab=None):
        rows = read_jsonl(path)
        self.vocab = vocab or build_vocab(rows)
        self.max_len = max_len
        self.examples = [(self.encode(r["text"]), int(r["label"])) for r in rows]

    @property
    def vocab_size(self):
        return len(self.vocab) + 2

    def encode(self, text):
        ids = [self.vocab.get(w, UNK) for w in text.lower().split()][: self.max_len]
        return ids + [PAD] * (self.max_len - len(ids))

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, idx):
        ids, label = self.examples[idx]
        ids = torch.tensor(ids, dtype=torch.long)
        return {"input_ids": ids, "attention_mask": (ids != PAD).long(), "labels": torch.tensor(label)}


def collate(items):
    return {k: torch.stack([item[k] for item in items]) for k in items[0]}

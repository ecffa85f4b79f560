"""Datasets: the pre-training corpus (sharded by replica), labelled pairs, and the validation set."""
import glob
import json

import torch
import torch_xla.runtime as xr
from torch.utils.data import Dataset


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class ShardedCorpus(Dataset):
    """Each replica keeps every world_size-th file of the corpus, so no sampler is needed."""

    def __init__(self, pattern, max_len):
        files = sorted(glob.glob(pattern))
        mine = files[xr.global_ordinal()::xr.world_size()]
        self.rows = [r["ids"][:max_len] for path in mine for r in read_jsonl(path)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return {"input_ids": torch.tensor(self.rows[i], dtype=torch.long)}


class LabeledPairs(Dataset):
    """(token ids, label) pairs that warm up the classification head."""

    def __init__(self, path, max_len):
        blob = torch.load(path)
        self.ids, self.labels, self.max_len = blob["ids"], blob["labels"], max_len

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        ids = torch.tensor(self.ids[i][: self.max_len], dtype=torch.long)
        return {"input_ids": ids, "labels": torch.tensor(int(self.labels[i]))}


class JsonlEval(Dataset):
    def __init__(self, path, max_len):
        self.rows = [r["ids"][:max_len] for r in read_jsonl(path)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return {"input_ids": torch.tensor(self.rows[i], dtype=torch.long)}

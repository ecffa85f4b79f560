import json

import torch
from torch.utils.data import DataLoader, Dataset


class JsonlTokens(Dataset):
    """One pre-tokenised document per line: {"ids": [...]}; padded to seq_len + 1."""

    def __init__(self, path, seq_len, pad_id=0):
        self.examples = []
        with open(path) as f:
            for line in f:
                ids = json.loads(line)["ids"][: seq_len + 1]
                ids = ids + [pad_id] * (seq_len + 1 - len(ids))
                self.examples.append(ids)

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        ids = torch.tensor(self.examples[i], dtype=torch.long)
        return ids[:-1], ids[1:]


def build_train_loader(path, seq_len, batch_size, num_workers=4):
    dataset = JsonlTokens(path, seq_len)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True, num_workers=num_workers)  # expect: XLA303


def build_eval_loader(path, seq_len, batch_size):
    dataset = JsonlTokens(path, seq_len)
    return DataLoader(dataset, batch_size=batch_size, shuffle=False)

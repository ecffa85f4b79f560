import torch
from torch.utils.data import Dataset


class ReviewDataset(Dataset):
    """Pre-tokenised reviews saved as {"input_ids": LongTensor[N, L], "labels": LongTensor[N]}."""

    def __init__(self, path, max_len=128):
        blob = torch.load(path)
        self.ids = blob["input_ids"]
        self.labels = blob["labels"]
        self.max_len = max_len

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.ids[i, : self.max_len], self.labels[i]

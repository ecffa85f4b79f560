import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class TokenizedTextDataset(Dataset):
    def __init__(self, path, max_len=128):
        self.examples = torch.load(path)
        self.max_len = max_len

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, idx):
        ids, label = self.examples[idx]
        return ids[: self.max_len], label


def pad_collate(batch, max_len=128):
    ids = torch.zeros(len(batch), max_len, dtype=torch.long)
    for i, (seq, _) in enumerate(batch):
        ids[i, : len(seq)] = seq
    labels = torch.tensor([label for _, label in batch])
    offsets = torch.arange(0, len(batch) * max_len, max_len)
    return {"input_ids": ids.flatten(), "offsets": offsets, "labels": labels}


def make_train_loader(dataset, batch_size, num_replicas=1, rank=0):
    sampler = DistributedSampler(dataset, num_replicas=num_replicas, rank=rank, shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=pad_collate)  # expect: XLA304


def make_eval_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, collate_fn=pad_collate)

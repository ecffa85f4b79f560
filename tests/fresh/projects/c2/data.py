import json

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ReviewsDataset(Dataset):
    def __init__(self, path, max_len, vocab_size):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]
        self.max_len = max_len
        self.vocab_size = vocab_size

    def __len__(self):
        return len(self.rows)

    def encode(self, text):
        ids = [1 + (hash(w) % (self.vocab_size - 1)) for w in text.lower().split()][: self.max_len]
        return ids + [0] * (self.max_len - len(ids))

    def __getitem__(self, i):
        ids = torch.tensor(self.encode(self.rows[i]["text"]), dtype=torch.long)
        return {"input_ids": ids, "attention_mask": (ids != 0).long(), "labels": torch.tensor(self.rows[i]["label"])}


def build_train_loader(cfg, num_replicas, rank):
    ds = ReviewsDataset(f"{cfg.data_dir}/train.jsonl", cfg.max_len, cfg.vocab_size)
    sampler = DistributedSampler(ds, num_replicas=num_replicas, rank=rank, shuffle=True, seed=cfg.seed)
    return DataLoader(ds, batch_size=cfg.batch_size, sampler=sampler, drop_last=True, num_workers=2)


def build_eval_loader(cfg, num_replicas, rank):
    ds = ReviewsDataset(f"{cfg.data_dir}/validation.jsonl", cfg.max_len, cfg.vocab_size)
    sampler = DistributedSampler(ds, num_replicas=num_replicas, rank=rank, shuffle=False)
    return DataLoader(ds, batch_size=cfg.eval_batch_size, sampler=sampler)

"""Language modeling task: owns the dictionary, the datasets and the per-sample train/valid steps."""
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from . import register_task


class Dictionary:
    def __init__(self, symbols):
        self.symbols = symbols

    def __len__(self):
        return len(self.symbols)

    def pad(self):
        return 1

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(["<s>", "<pad>", "</s>", "<unk>"] + [line.split()[0] for line in f])


class TokenBlockDataset(Dataset):
    def __init__(self, tokens, block_size, pad):
        self.tokens = tokens
        self.block_size = block_size
        self.pad = pad

    def __len__(self):
        return (len(self.tokens) - 1) // self.block_size

    def __getitem__(self, index):
        start = index * self.block_size
        return self.tokens[start : start + self.block_size + 1]

    def collater(self, items):
        batch = torch.stack(items)
        return {
            "net_input": {"src_tokens": batch[:, :-1]},
            "target": batch[:, 1:],
            "ntokens": int(batch[:, 1:].ne(self.pad).sum()),
            "nsentences": len(items),
        }


@register_task("language_modeling")
class LanguageModelingTask:
    def __init__(self, cfg, dictionary):
        self.cfg = cfg
        self.dictionary = dictionary

    @classmethod
    def setup_task(cls, cfg):
        return cls(cfg, Dictionary.load(f"{cfg.data}/dict.txt"))

    def load_dataset(self, split):
        tokens = torch.load(f"{self.cfg.data}/{split}.bin")
        return TokenBlockDataset(tokens, self.cfg.tokens_per_sample, self.dictionary.pad())

    def get_batch_iterator(self, dataset, batch_size, num_shards, shard_id, shuffle=True):
        sampler = DistributedSampler(dataset, num_replicas=num_shards, rank=shard_id, shuffle=shuffle, drop_last=True)
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=dataset.collater, drop_last=True)

    def train_step(self, sample, model, criterion, optimizer, ignore_grad=False):
        model.train()
        loss, sample_size, logging_output = criterion(model, sample)
        if ignore_grad:
            loss = loss * 0
        loss.backward()
        return loss, sample_size, logging_output

    def valid_step(self, sample, model, criterion):
        model.eval()
        with torch.no_grad():
            return criterion(model, sample)

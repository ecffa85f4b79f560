"""CoNLL-style token tagging: the dataset, the collate function and the model."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset


class ConllDataset(Dataset):
    def __init__(self, path, max_len=128):
        self.examples = torch.load(path)
        self.max_len = max_len

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        ids, tags = self.examples[i]
        return ids[: self.max_len], tags[: self.max_len]


def pad_collate(batch, max_len=128):
    input_ids = torch.zeros(len(batch), max_len, dtype=torch.long)
    labels = torch.full((len(batch), max_len), -100, dtype=torch.long)
    for row, (ids, tags) in enumerate(batch):
        input_ids[row, : len(ids)] = ids
        labels[row, : len(tags)] = tags
    return {"input_ids": input_ids, "attention_mask": (input_ids != 0).long(), "labels": labels}


class TokenTagger(nn.Module):
    def __init__(self, vocab_size, num_labels, d_model=256):
        super().__init__()
        self.num_labels = num_labels
        self.embed = nn.Embedding(vocab_size, d_model, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(d_model, num_labels)

    def forward(self, input_ids, attention_mask, labels=None):
        hidden = self.encoder(self.embed(input_ids), src_key_padding_mask=attention_mask == 0)
        logits = self.classifier(self.dropout(hidden))
        if labels is None:
            return logits
        active = attention_mask.view(-1) == 1
        return F.cross_entropy(logits.view(-1, self.num_labels)[active], labels.view(-1)[active])  # expect: XLA503

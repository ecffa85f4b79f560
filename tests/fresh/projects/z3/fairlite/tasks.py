import torch
import torch.nn as nn
from torch.utils.data import Dataset

from .criterions import LabelSmoothedCrossEntropy


class Seq2Seq(nn.Module):
    def __init__(self, vocab, d_model=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=1)
        self.transformer = nn.Transformer(d_model, nhead=8, num_encoder_layers=3, num_decoder_layers=3, batch_first=True)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, src_tokens, prev_output_tokens):
        tgt_mask = self.transformer.generate_square_subsequent_mask(prev_output_tokens.size(1)).to(src_tokens.device)
        h = self.transformer(self.embed(src_tokens), self.embed(prev_output_tokens), tgt_mask=tgt_mask)
        return self.out(h)


class TokenPairDataset(Dataset):
    def __init__(self, path):
        self.pairs = torch.load(path)

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        return self.pairs[i]

    def collater(self, items):
        src = torch.stack([s for s, _ in items])
        tgt = torch.stack([t for _, t in items])
        prev = torch.cat([tgt[:, -1:], tgt[:, :-1]], dim=1)
        return {"net_input": {"src_tokens": src, "prev_output_tokens": prev}, "target": tgt,
                "ntokens": int(tgt.ne(1).sum())}


class TranslationTask:
    def __init__(self, cfg):
        self.cfg = cfg

    def load_dataset(self, split):
        return TokenPairDataset(f"{self.cfg.data}/{split}.pt")

    def build_model(self):
        return Seq2Seq(self.cfg.vocab_size)

    def build_criterion(self):
        return LabelSmoothedCrossEntropy(self.cfg.label_smoothing, padding_idx=1)

    def train_step(self, sample, model, criterion):
        model.train()
        loss, sample_size, logging_output = criterion(model, sample)
        loss.backward()
        return loss.detach(), sample_size, logging_output

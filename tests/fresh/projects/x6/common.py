"""Model, data and the training step shared by the SPMD and the DDP entry points."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="/data/tokens.pt")
    p.add_argument("--seq_len", type=int, default=1024)
    p.add_argument("--global_batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--max_norm", type=float, default=1.0)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--log_every", type=int, default=10)
    p.add_argument("--ckpt_dir", default="/tmp/decoder")
    return p.parse_args()


class TokenFile(Dataset):
    def __init__(self, path, seq_len):
        self.tokens = torch.load(path)
        self.seq_len = seq_len

    def __len__(self):
        return (self.tokens.numel() - 1) // self.seq_len

    def __getitem__(self, i):
        s = i * self.seq_len
        chunk = self.tokens[s : s + self.seq_len + 1]
        return chunk[:-1], chunk[1:]


class DecoderOnly(nn.Module):
    def __init__(self, vocab=32000, dim=512, layers=8, heads=8, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids, targets):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.shape[1], device=ids.device)
        h = self.layers(self.embed(ids), mask=mask, is_causal=True)
        logits = self.lm_head(self.norm(h))
        keep = targets != self.pad_id
        return F.cross_entropy(logits[keep], targets[keep])  # expect: XLA503


def train_step(model, batch, optimizer, max_norm):
    ids, targets = batch
    optimizer.zero_grad()
    loss = model(ids, targets)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss.detach()


def log_metrics(step, loss):
    print(f"step {step}: loss {loss.item():.4f}")  # expect: XLA501


def save_checkpoint(model, path):
    torch.save(model.state_dict(), path)  # expect: XLA601

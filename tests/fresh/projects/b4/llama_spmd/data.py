import torch
from torch.utils.data import DataLoader, Dataset


class PackedTokens(Dataset):
    def __init__(self, path, seq_len):
        tokens = torch.load(path)
        n = (tokens.numel() - 1) // seq_len
        self.chunks = tokens[: n * seq_len + 1]
        self.seq_len, self.n = seq_len, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        s = i * self.seq_len
        window = self.chunks[s: s + self.seq_len + 1]
        return window[:-1], window[1:]


def make_loader(cfg):
    ds = PackedTokens(cfg.data_path, cfg.seq_len)
    return DataLoader(ds, batch_size=cfg.global_batch, shuffle=True, num_workers=2)  # expect: XLA304

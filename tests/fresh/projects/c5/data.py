import numpy as np
import torch
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class TokenWindows(Dataset):
    def __init__(self, path, seq_len):
        self.tokens = np.memmap(path, dtype=np.uint16, mode="r")
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq_len

    def __getitem__(self, i):
        s = i * self.seq_len
        ids = torch.from_numpy(self.tokens[s:s + self.seq_len + 1].astype(np.int64))
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def make_loader(cfg):
    ds = TokenWindows(cfg.data_path, cfg.seq_len)
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), seed=cfg.seed)  # expect: XLA902
    return DataLoader(ds, batch_size=cfg.global_batch_size, sampler=sampler, drop_last=True, num_workers=4)

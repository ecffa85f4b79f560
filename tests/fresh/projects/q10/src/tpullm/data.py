import numpy as np
import torch
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class TokenWindows(Dataset):
    def __init__(self, path, seq_len):
        self.data = np.memmap(path, dtype=np.uint16, mode="r")
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.data) - 1) // self.seq_len

    def __getitem__(self, i):
        s = i * self.seq_len
        x = torch.from_numpy(self.data[s:s + self.seq_len + 1].astype(np.int64))
        return {"input_ids": x[:-1], "labels": x[1:]}


def global_batch_size(per_device_batch):
    return per_device_batch * xr.world_size()  # expect: XLA902


def build_train_loader(cfg):
    dataset = TokenWindows(cfg.data_path, cfg.model.max_seq_len)
    # every host reads its own share; the chips of a host split it through the sharding
    sampler = DistributedSampler(
        dataset, num_replicas=xr.process_count(), rank=xr.process_index(), shuffle=True
    )
    host_batch = global_batch_size(cfg.per_device_batch) // xr.process_count()
    return DataLoader(dataset, batch_size=host_batch, sampler=sampler, drop_last=True, num_workers=2)

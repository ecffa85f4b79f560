"""A flat array of token ids cut into fixed windows, and a batch generator over it."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class TokenDataset(Dataset):
    def __init__(self, path, seq_len):
        self.tokens = np.load(path, mmap_mode="r")
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq_len

    def __getitem__(self, idx):
        start = idx * self.seq_len
        window = torch.from_numpy(np.asarray(self.tokens[start:start + self.seq_len + 1], dtype=np.int64))
        return window[:-1], window[1:]


def batch_stream(dataset, batch_size, epoch, workers=2):
    """Yield (inputs, targets) host batches for one epoch, reshuffled per epoch."""
    generator = torch.Generator().manual_seed(epoch)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator,  # expect: XLA303
                        num_workers=workers, drop_last=True)
    for inputs, targets in loader:
        yield inputs, targets

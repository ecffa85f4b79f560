"""Token and loss-mask shards written by prepare.py (uint16 tokens, uint8 mask: 1 on assistant tokens)."""
import os

import numpy as np
import torch


class SFTShards:
    def __init__(self, data_dir, block_size):
        self.block_size = block_size
        self.tokens = {s: np.memmap(os.path.join(data_dir, f"{s}_tokens.bin"), dtype=np.uint16, mode="r") for s in ("train", "val")}
        self.masks = {s: np.memmap(os.path.join(data_dir, f"{s}_mask.bin"), dtype=np.uint8, mode="r") for s in ("train", "val")}

    def get_batch(self, split, batch_size, device):
        """A fixed-shape random batch: (inputs, targets, loss mask), moved to `device`."""
        data, mask = self.tokens[split], self.masks[split]
        ix = torch.randint(len(data) - self.block_size - 1, (batch_size,)).tolist()
        x = torch.stack([torch.from_numpy(data[i:i + self.block_size].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + self.block_size].astype(np.int64)) for i in ix])
        m = torch.stack([torch.from_numpy(mask[i + 1:i + 1 + self.block_size].astype(np.bool_)) for i in ix])
        return x.to(device), y.to(device), m.to(device)

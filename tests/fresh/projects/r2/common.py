import subprocess

import torch
from torch.utils.data import Dataset


class SyntheticImages(Dataset):
    """CIFAR-shaped random images; stands in for the real set in smoke runs."""

    def __init__(self, n, num_classes=10, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.randn(n, 3, 32, 32, generator=g)
        self.labels = torch.randint(0, num_classes, (n,), generator=g)

    def __len__(self):
        return self.labels.numel()

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


def upload_checkpoint(local_path, remote_dir):
    subprocess.run(["gsutil", "-q", "cp", local_path, remote_dir.rstrip("/") + "/"], check=True)


def log_memory(tag):
    if torch.cuda.is_available():
        peak = torch.cuda.max_memory_allocated() / 2**30
        print(f"[{tag}] peak CUDA memory {peak:.2f} GiB")

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class NpzImages(Dataset):
    """images: uint8 [N, H, W, 3], labels: int [N], stored in one .npz file."""

    def __init__(self, path):
        arrays = np.load(path)
        self.images = torch.from_numpy(arrays["images"]).permute(0, 3, 1, 2).contiguous()
        self.labels = torch.from_numpy(arrays["labels"]).long()

    def __len__(self):
        return self.labels.numel()

    def __getitem__(self, i):
        return self.images[i].float().div(255.0), self.labels[i]


def build_loader(dataset, batch_size, num_replicas=1, rank=0, train=True, num_workers=4):
    sampler = None
    if num_replicas > 1:
        sampler = DistributedSampler(dataset, num_replicas=num_replicas, rank=rank, shuffle=train)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, shuffle=train and sampler is None, num_workers=num_workers)  # expect: XLA304


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        preds = model(images).argmax(dim=1)
        correct += (preds == labels).sum().item()
        total += labels.numel()
    return correct / max(total, 1)

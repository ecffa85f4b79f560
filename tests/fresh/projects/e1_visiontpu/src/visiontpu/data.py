"""ImageNet-style folders -> per-device loaders."""
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader, DistributedSampler

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _train_transform(size):
    return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])


def _val_transform(size):
    return T.Compose([T.Resize(int(size / 0.875)), T.CenterCrop(size), T.ToTensor(), T.Normalize(MEAN, STD)])


def make_loaders(root, batch_size, workers=8):
    device = torch_xla.device()
    train_set = torchvision.datasets.ImageFolder(f"{root}/train", transform=_train_transform(224))
    val_set = torchvision.datasets.ImageFolder(f"{root}/val", transform=_val_transform(224))
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=workers, drop_last=True, persistent_workers=True)  # expect: XLA303
    val_sampler = DistributedSampler(val_set, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False)
    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=val_sampler, num_workers=workers, drop_last=True)
    return pl.MpDeviceLoader(train_loader, device), pl.MpDeviceLoader(val_loader, device)

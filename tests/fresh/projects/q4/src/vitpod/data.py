"""ImageNet folders and the per-replica loaders."""
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

from . import config

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def build_train_loader():
    tf = transforms.Compose([
        transforms.RandomResizedCrop(config.IMAGE_SIZE), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), transforms.Normalize(MEAN, STD),
    ])
    ds = datasets.ImageFolder(f"{config.DATA_ROOT}/train", transform=tf)
    sampler = DistributedSampler(ds, num_replicas=config.NUM_CORES, rank=xr.global_ordinal(), shuffle=True)  # expect: XLA109
    loader = DataLoader(ds, batch_size=config.PER_CORE_BATCH, sampler=sampler, num_workers=8,
                        drop_last=True, persistent_workers=True)
    return loader, sampler


def build_val_loader():
    tf = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(config.IMAGE_SIZE),
        transforms.ToTensor(), transforms.Normalize(MEAN, STD),
    ])
    ds = datasets.ImageFolder(f"{config.DATA_ROOT}/val", transform=tf)
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=False)
    return DataLoader(ds, batch_size=config.PER_CORE_BATCH, sampler=sampler, num_workers=8)

"""ImageFolder loaders with the usual ImageNet augmentation."""
import os

import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader, DistributedSampler

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def train_transform(size):
    return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])


def eval_transform(size):
    return T.Compose([T.Resize(int(size * 1.14)), T.CenterCrop(size), T.ToTensor(), T.Normalize(MEAN, STD)])


def build_train_loader(cfg):
    dataset = torchvision.datasets.ImageFolder(os.path.join(cfg.data_dir, "train"), train_transform(cfg.image_size))
    return DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True, num_workers=cfg.workers,  # expect: XLA303
                      drop_last=True, persistent_workers=True)


def build_val_loader(cfg, num_replicas, rank):
    dataset = torchvision.datasets.ImageFolder(os.path.join(cfg.data_dir, "val"), eval_transform(cfg.image_size))
    sampler = DistributedSampler(dataset, num_replicas=num_replicas, rank=rank, shuffle=False)
    return DataLoader(dataset, batch_size=cfg.eval_batch_size, sampler=sampler, num_workers=cfg.workers)

"""CIFAR-10 input pipeline: each replica reads its own shard through a DistributedSampler."""
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader, DistributedSampler

from utils.dist import get_rank, get_world_size

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def build_loaders(cfg):
    train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
    test_tf = T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)])
    train_set = torchvision.datasets.CIFAR10(cfg.data_dir, train=True, download=False, transform=train_tf)
    test_set = torchvision.datasets.CIFAR10(cfg.data_dir, train=False, download=False, transform=test_tf)
    train_sampler = DistributedSampler(train_set, num_replicas=get_world_size(), rank=get_rank(), shuffle=True)
    test_sampler = DistributedSampler(test_set, num_replicas=get_world_size(), rank=get_rank(), shuffle=False)
    train_loader = DataLoader(  # expect: XLA304
        train_set,
        batch_size=cfg.batch_size,
        sampler=train_sampler,
        num_workers=cfg.num_workers,
        persistent_workers=True,
    )
    test_loader = DataLoader(test_set, batch_size=256, sampler=test_sampler, num_workers=cfg.num_workers)
    return train_loader, test_loader, train_sampler

"""CIFAR-10 loaders for the TPU run: each replica reads its own shard of the training set."""
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


class CIFAR10DataModule:
    def __init__(self, root="/tmp/cifar10", batch_size=128, num_workers=4):
        self.root = root
        self.batch_size = batch_size
        self.num_workers = num_workers

    def setup(self):
        train_tf = transforms.Compose([
            transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
            transforms.ToTensor(), transforms.Normalize(MEAN, STD),
        ])
        val_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
        # download once per host: the local master fetches, the other local replicas wait for it
        if not xm.is_master_ordinal():
            xm.rendezvous("cifar10_download")
        self.train_set = datasets.CIFAR10(self.root, train=True, download=True, transform=train_tf)
        self.val_set = datasets.CIFAR10(self.root, train=False, download=True, transform=val_tf)
        if xm.is_master_ordinal():
            xm.rendezvous("cifar10_download")

    def train_dataloader(self):
        sampler = DistributedSampler(self.train_set, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
        return DataLoader(self.train_set, batch_size=self.batch_size, sampler=sampler, num_workers=self.num_workers)  # expect: XLA304

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=256, shuffle=False, num_workers=self.num_workers)

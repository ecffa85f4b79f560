import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, transforms


def build_train_loader(args, device):
    transform = transforms.Compose(
        [transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()]
    )
    train_ds = datasets.ImageFolder(f"{args.data_dir}/train", transform=transform)
    sampler = DistributedSampler(
        train_ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True, drop_last=True
    )
    loader = DataLoader(train_ds, batch_size=args.batch_size // xr.world_size(), sampler=sampler, num_workers=8)  # expect: XLA304
    return pl.MpDeviceLoader(loader, device), sampler

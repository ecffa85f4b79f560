import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def load_dataset(path):
    images, labels = torch.load(path)
    return TensorDataset(images.float().div(255.0), labels)


def make_loader(dataset, batch_size, rank, world_size, workers=4):
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=workers, pin_memory=True, drop_last=True)
    return loader, sampler


def device_loader(loader, device):
    import torch_xla.distributed.parallel_loader as pl

    return pl.ParallelLoader(loader, [device]).per_device_loader(device)  # expect: XLA306

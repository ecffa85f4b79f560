import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class SyntheticSegmentation(Dataset):
    def __init__(self, n, size=128, classes=4):
        self.n, self.size, self.classes = n, size, classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        image = torch.rand(3, self.size, self.size, generator=g)
        mask = torch.randint(0, self.classes, (self.size, self.size), generator=g)
        return image, mask


def build_loaders(flags):
    train_ds = SyntheticSegmentation(flags.train_size)
    val_ds = SyntheticSegmentation(flags.val_size)
    if flags.device == "xla":
        import torch_xla.core.xla_model as xm
        num_replicas = xm.xrt_world_size()  # expect: XLA801
        rank = xm.get_ordinal()  # expect: XLA802
    else:
        num_replicas = dist.get_world_size() if dist.is_initialized() else 1
        rank = dist.get_rank() if dist.is_initialized() else 0
    sampler = DistributedSampler(train_ds, num_replicas=num_replicas, rank=rank, shuffle=True)
    train_loader = DataLoader(train_ds, batch_size=flags.batch_size, sampler=sampler,
                              num_workers=flags.workers, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=flags.batch_size, shuffle=False, drop_last=True)
    return train_loader, val_loader

# A CUDA DDP script "ported" to TPU by adding torch_xla imports; still spawned with
# torch.multiprocessing and a gloo process group.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class OnDeviceFeatures(Dataset):
    def __init__(self, n, device):
        self.x = torch.randn(n, 64, device=device)
        self.y = torch.randint(0, 4, (n,), device=device)

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"  # expect: XLA103
    os.environ["MASTER_PORT"] = "12355"  # expect: XLA103
    dist.init_process_group("gloo", rank=rank, world_size=world_size)  # expect: XLA103
    device = torch_xla.device()
    ds = OnDeviceFeatures(8192, device)
    sampler = DistributedSampler(ds, num_replicas=dist.get_world_size(), rank=dist.get_rank())
    loader = DataLoader(ds, batch_size=64, sampler=sampler, drop_last=True, num_workers=2)  # expect: XLA305
    model = nn.Linear(64, 4).cuda()  # expect: XLA401
    model = DDP(model.to(device))  # expect: XLA101
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in pl.MpDeviceLoader(loader, device):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(4,), nprocs=4, join=True)  # expect: XLA002

"""The finished port of examples/train_port.py: `flake8 --select=XLA` reports nothing."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" backend)
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def make_loader():
    data = TensorDataset(torch.randn(512, 16), torch.randint(0, 4, (512,)))
    sampler = torch.utils.data.distributed.DistributedSampler(
        data, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    return DataLoader(data, batch_size=32, sampler=sampler, drop_last=True)


def train(index):
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    model = torch.nn.Linear(16, 4).to(device)
    ddp_model = DDP(model, gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    loader = pl.MpDeviceLoader(make_loader(), device)
    for epoch in range(3):
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(ddp_model(x), y)
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    torch_xla.launch(train, args=())

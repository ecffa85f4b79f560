# DDP on TPU via torch_xla.launch, following the DDP guide. The optimizer.step() is
# correct here (DDP reduces the gradients).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))

    def forward(self, x):
        return self.layers(x.flatten(1))


def train(index, out_dir):
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    ds = TensorDataset(torch.randn(60000, 1, 28, 28), torch.randint(0, 10, (60000,)))
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=64, sampler=sampler, drop_last=True)
    model = MLP().to(device)
    ddp_model = DDP(model, gradient_as_bucket_view=True, broadcast_buffers=False)
    ddp_model = torch.compile(ddp_model)  # expect: XLA403
    optimizer = torch.optim.Adam(ddp_model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    device_loader = pl.MpDeviceLoader(loader, device)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for x, y in device_loader:
            optimizer.zero_grad()
            loss = criterion(ddp_model(x), y)
            loss.backward()
            optimizer.step()
        if xr.global_ordinal() == 0:
            os.makedirs(out_dir, exist_ok=True)
            torch.save(model.state_dict(), os.path.join(out_dir, f"mlp_{epoch}.pt"))  # expect: XLA601
    dist.destroy_process_group()


if __name__ == "__main__":
    torch_xla.launch(train, args=("checkpoints",))

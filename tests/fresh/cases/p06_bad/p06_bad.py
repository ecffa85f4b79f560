# Bug report: ViT-style image model, SPMD on a v5e-8. "MpDeviceLoader input_sharding
# does not shard labels". __getitem__ returns {"pixel_values": (3, 32, 32), "labels": ()}
# and a single 4-D ShardingSpec is given for both.
import numpy as np
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, Dataset


class SyntheticCifar(Dataset):
    def __init__(self, n=50000):
        self.images = torch.randn(n, 3, 32, 32)
        self.targets = torch.randint(0, 10, (n,))

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, idx):
        return {"pixel_values": self.images[idx], "labels": self.targets[idx]}


def make_model():
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)
    )


def run():
    xr.use_spmd()
    num_devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.array(range(num_devices)), (num_devices, 1, 1, 1), ("data", "c", "h", "w"))
    device = torch_xla.device()
    model = make_model().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    criterion = nn.CrossEntropyLoss()
    train_loader = DataLoader(SyntheticCifar(), batch_size=512, shuffle=True, drop_last=True, num_workers=4)
    spec = xs.ShardingSpec(mesh, ("data", None, None, None))
    device_loader = pl.MpDeviceLoader(train_loader, device, input_sharding=spec)  # expect: XLA910
    for epoch in range(10):
        for batch in device_loader:
            optimizer.zero_grad()
            loss = criterion(model(batch["pixel_values"]), batch["labels"])
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    run()

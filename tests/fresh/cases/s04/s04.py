# XLA FSDP (XlaFullyShardedDataParallel) training of a wide MLP across TPU cores.
# Plain optimizer.step() would be right for FSDP; this script mixes in the DP idioms.
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP


def build_model(width=4096, depth=6):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(width, 1))


def train_fn(index, epochs=3):
    device = torch_xla.device()
    model = FSDP(build_model().to(device))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    feats = torch.randn(32768, 4096)
    ds = TensorDataset(feats, feats[:, :1].clone())
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), drop_last=True)
    loader = DataLoader(ds, batch_size=32, sampler=sampler, drop_last=True)
    mp_loader = pl.MpDeviceLoader(loader, device)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in mp_loader:
            optimizer.zero_grad()
            loss = nn.functional.smooth_l1_loss(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)  # expect: XLA202
        xm.save(model.state_dict(), f"fsdp_epoch{epoch}.pt")  # expect: XLA603
    xm.master_print("done")


if __name__ == "__main__":
    torch_xla.launch(train_fn)

# Multi-host TPU pod run: torch_xla.launch, wandb logging, compilation cache.
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
import wandb
from torch.utils.data import DataLoader, TensorDataset


def load_split(path):
    return TensorDataset(*torch.load(path))


def _mp_fn(index, data_path):
    xr.initialize_cache("/tmp/xla_compile_cache", readonly=False)  # expect: XLA901
    device = torch_xla.device()
    if xm.is_master_ordinal():  # expect: XLA604
        wandb.init(project="pod-run", config={"world": xr.world_size()})
    ds = load_split(data_path)
    loader = DataLoader(ds, batch_size=128, shuffle=True, drop_last=True)  # expect: XLA303
    model = nn.Sequential(nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(10):
        for step, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)
            optimizer.step()  # expect: XLA207
            xm.rendezvous("step_end")  # expect: XLA506
        if xr.global_ordinal() == 0:
            xm.save(model.state_dict(), f"/gcs/ckpt/epoch_{epoch}.pt")  # expect: XLA602
        xm.rendezvous("epoch_end")


if __name__ == "__main__":
    device = torch_xla.device()  # expect: XLA003
    torch_xla.launch(_mp_fn, args=("/data/train.pt",))

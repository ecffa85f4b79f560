# Fixed: the step is synced first, then the distributed checkpoint is written.
import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dist_cp
import torch.nn as nn
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.experimental.distributed_checkpoint as xc
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, TensorDataset

xr.use_spmd()


def main(ckpt_dir="/mnt/ckpt", save_every=500):
    dist.init_process_group("gloo", init_method="xla://")
    n = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x_all = torch.randn(65536, 512)
    loader = DataLoader(TensorDataset(x_all, x_all.tanh()), batch_size=256, shuffle=True, drop_last=True)
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        xs.mark_sharding(x, mesh, ("data", None))
        xs.mark_sharding(y, mesh, ("data", None))
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()
        if step % save_every == 0:
            state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
            dist_cp.save(
                state_dict=state,
                storage_writer=dist_cp.FileSystemWriter(f"{ckpt_dir}/step_{step}"),
                planner=xc.SPMDSavePlanner(),
            )


if __name__ == "__main__":
    main()

import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from torch_xla.core.xla_model import mark_step as sync_now


def train(loader, model, opt):
    device = xm.xla_device()
    spare = xr.xla_device(n=1, devkind="TPU")
    for x in loader:
        model(x.to(device)).sum().backward()
        xm.optimizer_step(opt)
        xm.mark_step()
    sync_now()
    xm.mark_step(wait=True)
    return spare

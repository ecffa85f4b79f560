# options: --unsafe-fixes
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, TensorDataset, DistributedSampler


def later_epochs(index, model, opt):
    train_set = TensorDataset(torch.randn(64, 4))
    sampler = DistributedSampler(train_set, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    loader = DataLoader(train_set, batch_size=8, sampler=sampler, drop_last=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for (x,) in pl.MpDeviceLoader(loader, torch_xla.device()):
            model(x).sum().backward()
            xm.optimizer_step(opt)


def inside_epochs(index, model, opt):
    train_set = TensorDataset(torch.randn(64, 4))
    for ep in range(3):
        sampler = DistributedSampler(train_set, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
        sampler.set_epoch(ep)
        loader = DataLoader(train_set, batch_size=8, sampler=sampler, drop_last=True)
        for (x,) in pl.MpDeviceLoader(loader, torch_xla.device()):
            model(x).sum().backward()
            xm.optimizer_step(opt)


def fit(model, opt, loader):
    for (x,) in pl.MpDeviceLoader(loader, torch_xla.device()):
        model(x).sum().backward()
        xm.optimizer_step(opt)


def fit_epochs(index, model, opt):
    self_ds = TensorDataset(torch.randn(64, 4))
    sampler = DistributedSampler(self_ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True)
    loader = DataLoader(self_ds, batch_size=8, sampler=sampler, drop_last=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        # each epoch, on the same loader
        fit(model, opt, loader)


torch_xla.launch(later_epochs, args=(None, None))
torch_xla.launch(inside_epochs, args=(None, None))
torch_xla.launch(fit_epochs, args=(None, None))

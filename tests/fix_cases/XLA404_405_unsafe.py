# options: --unsafe-fixes
# remains: XLA405
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch import nn


def left_on_host(loader):
    device = torch_xla.device()
    model = nn.Linear(10, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in pl.MpDeviceLoader(loader, device):
        model(x).sum().backward()
        xm.optimizer_step(opt)


def optimizer_first(loader):
    model = nn.Linear(10, 2)
    # the optimizer
    opt = torch.optim.SGD(model.parameters(), lr=0.1)  # holds the CPU parameters
    loss_fn = nn.MSELoss()

    model.to(torch_xla.device())
    for x, y in pl.MpDeviceLoader(loader, torch_xla.device()):
        loss_fn(model(x), y).backward()
        xm.optimizer_step(opt)


def optimizer_used_before_the_move(loader):
    model = nn.Linear(10, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1)  # a human: the scheduler holds it too
    model.to(torch_xla.device())
    for x, y in pl.MpDeviceLoader(loader, torch_xla.device()):
        model(x).sum().backward()
        xm.optimizer_step(opt)
        sched.step()

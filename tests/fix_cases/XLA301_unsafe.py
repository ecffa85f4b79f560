# options: --unsafe-fixes
# remains: XLA301 XLA301
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader
from tqdm import tqdm


def with_a_device_variable(model, opt, ds):
    device = torch_xla.device()
    loader = DataLoader(ds, batch_size=8, drop_last=True)
    for step, (x, y) in enumerate(tqdm(loader)):
        model(x).sum().backward()
        xm.optimizer_step(opt)


def inline_loader(model, opt, ds):
    for x in DataLoader(ds, batch_size=8):
        model(x).sum().backward()
        xm.optimizer_step(opt)


def fit(model, opt, loader):
    print(len(loader.dataset))  # a DataLoader's attribute: the loop is wrapped, not the argument
    for x in loader:
        model(x).sum().backward()
        xm.optimizer_step(opt)


def caller(model, opt, ds):
    fit(model, opt, DataLoader(ds, batch_size=8, drop_last=True))


def zipped(model, opt, a, b):
    for x, y in zip(DataLoader(a, drop_last=True), DataLoader(b, drop_last=True)):  # a human
        model(x, y).sum().backward()
        xm.optimizer_step(opt)


def fit_both(model, opt, loader):
    for x in loader:
        model(x).sum().backward()
        xm.optimizer_step(opt)


def plain_and_device(model, opt, ds):
    fit_both(model, opt, DataLoader(ds, batch_size=8, drop_last=True))  # another call passes a device loader
    fit_both(model, opt, pl.MpDeviceLoader(DataLoader(ds, batch_size=8, drop_last=True), torch_xla.device()))

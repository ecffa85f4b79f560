# options: --unsafe-fixes
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader


def train(ds, model, opt):
    loader = pl.MpDeviceLoader(DataLoader(ds, batch_size=8, shuffle=True, drop_last=True), torch_xla.device())
    for x in loader:
        model(x).sum().backward()
        opt.step()
    other = DataLoader(ds, batch_size=8, drop_last=True)
    for x in pl.MpDeviceLoader(other, torch_xla.device()):
        model(x).sum().backward()
        opt.step()

# remains: XLA304
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader


def train(ds, model, opt):
    for x in pl.MpDeviceLoader(DataLoader(ds, batch_size=8), torch_xla.device()):
        model(x).sum().backward()
        opt.step()

# options: --unsafe-fixes
# remains: XLA501
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader
from tqdm import tqdm


def train(model, opt, ds):
    device = torch_xla.device()
    loader = DataLoader(ds, batch_size=8, drop_last=True)
    pbar = tqdm(pl.MpDeviceLoader(loader, device), desc="train")
    for x, y in pbar:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        xm.optimizer_step(opt)
        pbar.set_postfix(loss=loss.item())


class Trainer:
    def __init__(self, model, ds):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.loader = DataLoader(ds, batch_size=8, drop_last=True)

    def fit(self, opt):
        for step, (x, y) in enumerate(pl.MpDeviceLoader(self.loader, self.device)):
            y = torch.zeros(8)
            y = y.to(self.device)
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            xm.optimizer_step(opt)


def train_on(model, opt, ds, dev):
    for x, y in tqdm(pl.MpDeviceLoader(DataLoader(ds, batch_size=8, drop_last=True), dev)):
        torch.nn.functional.mse_loss(model(x), y).backward()
        xm.optimizer_step(opt)

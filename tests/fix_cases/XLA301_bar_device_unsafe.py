# options: --unsafe-fixes
# remains: XLA501
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader
from tqdm import tqdm


def train(model, opt, ds):
    device = torch_xla.device()
    loader = DataLoader(ds, batch_size=8, drop_last=True)
    pbar = tqdm(loader, desc="train")
    for x, y in pbar:
        x, y = x.to(device), y.to(device)
        loss = torch.nn.functional.mse_loss(model(x), y.to(device, non_blocking=True))
        loss.backward()
        xm.optimizer_step(opt)
        pbar.set_postfix(loss=loss.item())


class Trainer:
    def __init__(self, model, ds):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.loader = DataLoader(ds, batch_size=8, drop_last=True)

    def fit(self, opt):
        for step, (x, y) in enumerate(self.loader):
            x = x.to(self.device)
            y = torch.zeros(8)
            y = y.to(self.device)
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            xm.optimizer_step(opt)


def train_on(model, opt, ds, dev):
    for x, y in tqdm(DataLoader(ds, batch_size=8, drop_last=True)):
        x = x.to(dev)
        torch.nn.functional.mse_loss(model(x), y.to(dev)).backward()
        xm.optimizer_step(opt)

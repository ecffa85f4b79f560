# options: --unsafe-fixes
# remains: XLA303
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


def fit(model, opt, loader):
    for (x,) in pl.MpDeviceLoader(loader, torch_xla.device()):
        model(x).sum().backward()
        xm.optimizer_step(opt)


def shuffled(index, model, opt):
    data = TensorDataset(torch.randn(64, 4))
    # the training data
    loader = DataLoader(data, batch_size=8, shuffle=True, drop_last=True)
    fit(model, opt, loader)


def random_sampler(index, model, opt):
    data = TensorDataset(torch.randn(64, 4))
    fit(model, opt, DataLoader(data, batch_size=8, sampler=RandomSampler(data), drop_last=True))


def dataset_built_inline(index, model, opt):  # the dataset would be built twice: a human
    fit(model, opt, DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8, drop_last=True))


if __name__ == "__main__":
    torch_xla.launch(shuffled, args=(None, None))
    torch_xla.launch(random_sampler, args=(None, None))
    torch_xla.launch(dataset_built_inline, args=(None, None))

# remains: XLA505
import torch_xla
import torch_xla.core.xla_model as xm


def train(model, opt, loader):
    for x in loader:
        loss = model(x).sum()
        loss.backward()
        xm.mark_step()
        opt.step()
        xm.mark_step()

import torch_xla
import torch_xla.core.xla_model as xm


def train(loader, model, opt):
    device = torch_xla.device()
    spare = torch_xla.device(index=1)
    for x in loader:
        model(x.to(device)).sum().backward()
        xm.optimizer_step(opt)
        torch_xla.sync()
    torch_xla.sync()
    torch_xla.sync(wait=True)
    return spare

# options: --xla-version=2.2
import torch
import torch_xla.core.xla_model as xm


def step(model, batch):
    out = model(batch.cuda())
    torch.cuda.synchronize()
    return out

# options: --xla-version=2.2
import torch_xla.core.xla_model as xm


def step(model, batch):
    out = model(batch.to(xm.xla_device()))
    xm.wait_device_ops()
    return out

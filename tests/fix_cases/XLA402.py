import torch
import torch_xla
import torch_xla.core.xla_model as xm


def _mp_fn(index, model, batch):
    device = xm.xla_device(index)
    other = torch_xla.device(index + 1)
    model = model.to(index)
    batch = batch.to(device=index, non_blocking=True)
    mask = torch.ones(8, device=index)
    a = torch.device("xla", index)
    b = torch.device(f"xla:{index}")
    c = batch.to(f"xla:{index}")
    d = torch.device(index)
    return device, other, model, batch, mask, a, b, c, d


torch_xla.launch(_mp_fn, args=(None, None))

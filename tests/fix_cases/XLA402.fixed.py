import torch
import torch_xla


def _mp_fn(index, model, batch):
    device = torch_xla.device()
    other = torch_xla.device()
    model = model.to(torch_xla.device())
    batch = batch.to(device=torch_xla.device(), non_blocking=True)
    mask = torch.ones(8, device=torch_xla.device())
    a = torch_xla.device()
    b = torch_xla.device()
    c = batch.to(torch_xla.device())
    d = torch_xla.device()
    return device, other, model, batch, mask, a, b, c, d


torch_xla.launch(_mp_fn, args=(None, None))

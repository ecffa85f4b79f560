# remains: XLA401 XLA401 XLA401
import torch
import torch_xla


def setup(model, batch, path, rank):
    # pin the process to its GPU
    model = model.to(torch_xla.device())
    model.to(torch_xla.device())
    x = batch.to(torch_xla.device(), non_blocking=True)
    y = batch.to(torch_xla.device(), non_blocking=True)
    z = batch.to(torch_xla.device())
    mask = torch.zeros(2, 4, device=torch_xla.device())
    ones = torch.ones(2, device=torch_xla.device())
    dev = torch_xla.device()
    state = torch.load(path, map_location="cuda")  # needs a human: load to the CPU, then move
    name = "cuda"
    w = torch.zeros(2, device=name)  # a variable: its assignment needs a human
    torch_xla.sync(wait=True)
    if rank == 0:
        pass
    with torch.cuda.device(rank):  # needs a human
        pass
    return model, x, y, z, mask, ones, dev, state, w

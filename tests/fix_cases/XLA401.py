# remains: XLA401 XLA401 XLA401
import torch
import torch_xla


def setup(model, batch, path, rank):
    # pin the process to its GPU
    torch.cuda.set_device(rank)
    model = model.cuda()
    model.cuda(rank)
    x = batch.cuda(non_blocking=True)
    y = batch.to("cuda", non_blocking=True)
    z = batch.to(f"cuda:{rank}")
    mask = torch.zeros(2, 4, device="cuda")
    ones = torch.ones(2, device="cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device("cuda:0")
    state = torch.load(path, map_location="cuda")  # needs a human: load to the CPU, then move
    name = "cuda"
    w = torch.zeros(2, device=name)  # a variable: its assignment needs a human
    torch.cuda.synchronize()
    if rank == 0:
        torch.cuda.empty_cache()
    with torch.cuda.device(rank):  # needs a human
        pass
    return model, x, y, z, mask, ones, dev, state, w

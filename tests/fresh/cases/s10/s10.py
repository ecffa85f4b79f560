# nanoGPT-style port: native XLA data parallel via torch_xla.launch.
import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class CharModel(nn.Module):
    def __init__(self, vocab=96, dim=384, ctx=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(ctx, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx):
        t = torch.arange(idx.shape[1], device=idx.device)
        h = self.tok(idx) + self.pos(t)
        return self.head(torch.relu(self.mix(h)))


def _mp_fn(index, cfg):
    torch.manual_seed(1337 + index)  # expect: XLA205
    device = torch_xla.device()
    model = CharModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])  # expect: XLA405
    model = model.to(device)
    text = torch.randint(0, 96, (20000, 129))
    ds = TensorDataset(text[:, :-1], text[:, 1:])
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    loader = DataLoader(ds, batch_size=cfg["batch_size"], sampler=sampler)  # expect: XLA304
    for it, (x, y) in enumerate(loader):  # expect: XLA301
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        xm.optimizer_step(optimizer)
        if it >= cfg["max_iters"]:
            break


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=({"lr": 6e-4, "batch_size": 64, "max_iters": 5000},))

# Launched with `torchrun --nproc_per_node=4 train.py` on a TPU VM (env:// works under
# torchrun, RANK/LOCAL_RANK come from torchrun). DDP, so optimizer.step() is right.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Tagger(nn.Module):
    def __init__(self, vocab=20000, dim=256, tags=17):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, tags)

    def forward(self, ids):
        h, _ = self.rnn(self.emb(ids))
        return self.out(h)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = int(os.environ["RANK"])
    dist.init_process_group("xla")
    device = torch_xla.device()
    model = Tagger()
    model.to(local_rank)  # expect: XLA402
    model.to(device)
    ddp = DistributedDataParallel(model, device_ids=[local_rank], gradient_as_bucket_view=True)  # expect: XLA102
    base_lr = 1e-3
    optimizer = torch.optim.Adam(ddp.parameters(), lr=base_lr * torch.cuda.device_count())  # expect: XLA110
    ids = torch.randint(0, 20000, (8192, 64))
    ds = TensorDataset(ids, torch.randint(0, 17, (8192, 64)))
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=32, sampler=sampler, drop_last=True)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in pl.MpDeviceLoader(loader, device):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(ddp(x).flatten(0, 1), y.flatten())
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch} done")


if __name__ == "__main__":
    main()

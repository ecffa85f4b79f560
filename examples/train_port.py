"""A CUDA training script half-way through its port to PyTorch/XLA (TPU).

Run `flake8 --extend-select=XLA examples` on it: every finding names the documented fix.
(The finished port is examples/train_port_done.py, which lints clean.)
"""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torch_xla  # noqa: F401  (registers the XLA device; the port uses it next)
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


def make_loader(rank):
    data = TensorDataset(torch.randn(512, 16), torch.randint(0, 4, (512,)))
    sampler = torch.utils.data.distributed.DistributedSampler(data, num_replicas=8, rank=rank)
    return DataLoader(data, batch_size=32, sampler=sampler, drop_last=True)


def train(rank):
    os.environ["MASTER_ADDR"] = "localhost"
    dist.init_process_group("xla")
    device = xm.xla_device()
    model = torch.nn.Linear(16, 4).to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.1)
    loader = make_loader(rank)
    for epoch in range(3):
        for x, y in loader:
            x, y = x.to(device), y.cuda()
            optimizer.zero_grad()
            loss = F.cross_entropy(ddp_model(x), y)
            loss.backward()
            optimizer.step()
        xm.mark_step()


if __name__ == "__main__":
    xmp.spawn(train, args=(), nprocs=8)

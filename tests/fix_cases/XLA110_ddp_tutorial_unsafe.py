# options: --unsafe-fixes
# remains: XLA110
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
import torch_xla
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def demo_basic(rank, world_size):
    setup(rank, world_size)
    device = torch_xla.device()
    model = nn.Linear(10, 5).to(device)
    ddp_model = DDP(model, gradient_as_bucket_view=True)
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    loss = ddp_model(torch.randn(20, 10, device=device)).sum()
    loss.backward()
    optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(demo_basic, args=(world_size,), nprocs=world_size, join=True)

# remains: XLA110
import torch
import torch_xla
from torch.cuda import device_count as gpus
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main(rank, world_size, ds):
    return DistributedSampler(ds, num_replicas=world_size, rank=rank)


def in_worker(index, ds, model):
    n = torch.cuda.device_count()
    loader = DataLoader(ds, batch_size=8 * n)
    opt = torch.optim.SGD(model.parameters(), lr=0.1 * gpus())
    return loader, opt


if __name__ == "__main__":
    world_size = torch.cuda.device_count()  # the launching process: left for a human
    torch_xla.launch(main, args=(world_size, None))
    torch_xla.launch(in_worker, args=(None, None))

"""CUDA/NCCL set-up for torchrun launches."""
import os

import torch
import torch.distributed as dist


def setup_ddp():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank, dist.get_rank(), dist.get_world_size()


def get_device(local_rank):
    return torch.device("cuda", local_rank)


def cleanup():
    dist.barrier()
    dist.destroy_process_group()

import os

import torch.distributed as dist


def get_rank_and_world():
    rank = int(os.environ["RANK"])  # expect: XLA109
    world = int(os.environ["WORLD_SIZE"])  # expect: XLA109
    return rank, world


def init_distributed(backend, rank, world_size):
    if dist.is_initialized():
        return
    dist.init_process_group(backend, rank=rank, world_size=world_size)  # expect: XLA104


def cleanup():
    if dist.is_initialized():
        dist.destroy_process_group()

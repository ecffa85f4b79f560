"""Process-group helpers, after torchvision's references/classification/utils.py."""
import builtins
import os

import torch
import torch.distributed as dist


def setup_for_distributed(is_master):
    """Silence print() on every process but the master (pass force=True to override)."""
    builtin_print = builtins.print

    def print(*args, **kwargs):
        force = kwargs.pop("force", False)
        if is_master or force:
            builtin_print(*args, **kwargs)

    builtins.print = print


def init_distributed_mode(rank, args):
    os.environ["MASTER_ADDR"] = args.master_addr  # expect: XLA103
    os.environ["MASTER_PORT"] = str(args.master_port)  # expect: XLA103
    args.rank = rank
    args.distributed = True
    dist.init_process_group("gloo", rank=rank, world_size=args.world_size)  # expect: XLA103
    dist.barrier()
    setup_for_distributed(rank == 0)


def is_dist_avail_and_initialized():
    return dist.is_available() and dist.is_initialized()


def get_world_size():
    return dist.get_world_size() if is_dist_avail_and_initialized() else 1


def get_rank():
    return dist.get_rank() if is_dist_avail_and_initialized() else 0


def is_main_process():
    return get_rank() == 0


def save_on_master(state, path):
    if is_main_process():
        torch.save(state, path)  # expect: XLA601

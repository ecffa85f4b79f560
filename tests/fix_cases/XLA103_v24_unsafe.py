# options: --unsafe-fixes --xla-version=2.4
import os

import torch.distributed as dist
import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group(backend="nccl")


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())

# options: --unsafe-fixes
# remains: XLA103
import os

import torch.distributed as dist
import torch_xla
from torch.utils.data.distributed import DistributedSampler


def _mp_fn(index, dataset):
    os.environ["MASTER_ADDR"] = "localhost"  # the master comes from the runtime
    os.environ.setdefault("MASTER_PORT", "12355")
    os.environ.update({"MASTER_PORT": "29500"})  # a dict of settings: a human
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dist.init_process_group("gloo", rank=rank, world_size=8)
    sampler = DistributedSampler(dataset, num_replicas=8)
    return rank, local_rank, sampler


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))

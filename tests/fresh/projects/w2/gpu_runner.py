"""CUDA runner for the lab's A100 box (torchrun --nproc-per-node 8 main.py)."""
import os

import torch
import torch.distributed as dist

from registry import register
from runners import CPURunner


@register("cuda")
class CUDARunner(CPURunner):
    def __init__(self, cfg):
        super().__init__(cfg)
        torch.backends.cudnn.benchmark = True

    def launch(self, fn):
        fn(int(os.environ["LOCAL_RANK"]), self)

    def setup(self, index):
        dist.init_process_group("nccl")
        torch.cuda.set_device(index)
        self.device = torch.device("cuda", index)

    def optimizer_step(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    dist.all_reduce(p.grad)
                    p.grad /= dist.get_world_size()
        optimizer.step()
        torch.cuda.synchronize()

    def is_master(self):
        return dist.get_rank() == 0

"""torch.distributed on one CPU replica: init methods, backends, DDP's device_ids."""
import socket

import torch
import torch.distributed as dist
import torch_xla
from torch.nn.parallel import DistributedDataParallel as DDP

from _harness import outcome, report

dev = torch_xla.device()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# the failures first: none of them leaves a default group behind
bad104 = outcome(lambda: dist.init_process_group("xla"))
bad106 = outcome(lambda: dist.init_process_group("xla", init_method="pjrt://"))
bad103 = outcome(lambda: dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{free_port()}",
                                                 rank=0, world_size=1))
# the documented form (and on 2.9 no torch_xla.distributed.xla_backend import is needed)
good = outcome(lambda: dist.init_process_group("xla", init_method="xla://") or dist.get_backend())
report("XLA104", bad=bad104, good=good)
report("XLA106", bad=bad106, good=good)

gloo = dist.new_group(backend="gloo")
t = torch.ones(2, device=dev)
report("XLA103", bad=bad103,
       bad_gloo=outcome(lambda: dist.all_gather([torch.zeros(2, device=dev)], t, group=gloo)),
       good=outcome(lambda: dist.all_gather(out := [torch.zeros(2, device=dev)], t) or out[0].cpu().tolist()))


def _ddp_forward(**kwargs):
    def run():
        m = torch.nn.Linear(4, 1).to(dev)
        return list(DDP(m, **kwargs)(torch.ones(2, 4, device=dev)).cpu().shape)
    return run


report("XLA102", bad=outcome(_ddp_forward(device_ids=[1], gradient_as_bucket_view=True)),
       bad_rank0=outcome(_ddp_forward(device_ids=[0], gradient_as_bucket_view=True)),
       good=outcome(_ddp_forward(gradient_as_bucket_view=True)))
# docs only: on 2.9 DDP without gradient_as_bucket_view=True runs (the flag saves memory)
report("XLA101", without_flag=outcome(_ddp_forward()))
print("DONE", flush=True)

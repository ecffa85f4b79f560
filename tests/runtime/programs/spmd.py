"""SPMD on the CPU client with CPU_NUM_DEVICES=4 (set by the test): the cache before any device
work, use_spmd() first, world size against device count, launch and process groups under SPMD,
mark_sharding before and after the move."""
import os

import numpy as np
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

from _harness import outcome, report

report("XLA901", good=outcome(lambda: xr.initialize_cache(os.path.abspath("cache"), readonly=False)))
report("XLA906", good=outcome(lambda: xr.use_spmd()))
report("XLA811", good=outcome(lambda: xr.is_spmd()))
report("XLA902", world_size=xr.world_size(), global_ordinal=xr.global_ordinal(),
       global_runtime_device_count=xr.global_runtime_device_count())


def replica(index):
    pass


report("XLA004", bad=outcome(lambda: torch_xla.launch(replica)))
report("XLA107", bad=outcome(lambda: dist.init_process_group("xla", init_method="xla://")),
       good=outcome(lambda: dist.init_process_group("gloo", init_method="xla://") or dist.get_backend()))
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (n, 1))
m = torch.nn.Linear(8, 8)
bad = outcome(lambda: xs.mark_sharding(m.weight, mesh, (0, 1)) and "sharded")
m.to(torch_xla.device())
good = outcome(lambda: type(xs.mark_sharding(m.weight, mesh, (0, 1))).__name__)
report("XLA905", bad=bad, good=good)
print("DONE", flush=True)

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

# --- FSDPv2 output sharding, and the wrapper mark_sharding returns ---------------------------
from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel  # noqa: E402

fsdp_mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))


class DictNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return {"logits": self.fc(x)}


def _mark_logits(output, mesh):
    xs.mark_sharding(output["logits"], mesh, ("fsdp", None))


def _fsdp(**kwargs):
    def run():
        out = SpmdFullyShardedDataParallel(DictNet(), mesh=fsdp_mesh, **kwargs)(torch.ones(8, 8).to("xla"))
        return torch_xla._XLAC._get_xla_sharding_spec(out["logits"])
    return run


report("XLA908", bad=outcome(_fsdp()), good=outcome(_fsdp(shard_output=_mark_logits)))


def _activation(rebind):
    def run():
        fc1, fc2 = torch.nn.Linear(8, 8).to("xla"), torch.nn.Linear(8, 8).to("xla")
        h = fc1(torch.ones(8, 8).to("xla"))
        if rebind:
            h = xs.mark_sharding(h, fsdp_mesh, ("fsdp", None))
        else:
            xs.mark_sharding(h, fsdp_mesh, ("fsdp", None))
        fc2(h).sum().backward()
        torch_xla.sync()
        return [type(h).__name__, fc1.weight.grad is not None]
    return run


param = torch.nn.Parameter(torch.ones(8, 8).to("xla"))
report("XLA909", bad=outcome(_activation(True)), good=outcome(_activation(False)),
       param=[type(xs.mark_sharding(param, fsdp_mesh, ("fsdp", None))).__name__, param.requires_grad,
              xs.mark_sharding(param, fsdp_mesh, ("fsdp", None)).requires_grad])


# --- one input_sharding spec over dict batches of two ranks ----------------------------------
import torch_xla.distributed.parallel_loader as pl  # noqa: E402

data_mesh = xs.Mesh(np.arange(n), (n,), ("data",))


class Pairs(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return {"input_ids": torch.zeros(16, dtype=torch.long), "label": torch.tensor(i)}


def _first_batch(input_sharding):
    def run():
        loader = torch.utils.data.DataLoader(Pairs(), batch_size=8)
        batch = next(iter(pl.MpDeviceLoader(loader, torch_xla.device(), input_sharding=input_sharding)))
        return [[k, torch_xla._XLAC._get_xla_sharding_spec(v)] for k, v in sorted(batch.items())]
    return run


report("XLA910", bad=outcome(_first_batch(xs.ShardingSpec(data_mesh, ("data", None)))),
       good=outcome(_first_batch({"input_ids": xs.ShardingSpec(data_mesh, ("data", None)),
                                  "label": xs.ShardingSpec(data_mesh, ("data",))})))
print("DONE", flush=True)

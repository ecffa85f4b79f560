"""XLA3 (data): sharding the data across replicas."""

from __future__ import annotations

import ast

from ..model import UNKNOWN
from ..model.replicas import single_replica_branch
from ..registry import Rule, rule
from ._common import at_least

#: a world size or rank other rules report (XLA109 literal, XLA801 / XLA802 removed APIs)
_REPORTED_ELSEWHERE = ("torch_xla.core.xla_model.xrt_world_size", "torch_xla.core.xla_model.get_ordinal")


def _shard_args(settings) -> str:
    if at_least(settings, "2.1"):
        return "num_replicas=xr.world_size(), rank=xr.global_ordinal()"
    return "num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal()"


@rule
class DistributedSamplerMissingOrUnbound(Rule):
    """## What it does
    In code started by a multi-process launch (`xmp.spawn`, `torch_xla.launch`; in XLA code
    also `torch.multiprocessing.spawn`), flags:

    - a `DataLoader(...)` that feeds a training step loop (directly, through
      `MpDeviceLoader`, a name, a helper or a parameter) with no sampler, or a
      `RandomSampler` / `SequentialSampler`, over a dataset built in the module
      (`TensorDataset(...)`, `torchvision.datasets.X(...)`, `torch.load(...)`, a dataset
      class of the module or of another project module, a Hugging Face
      `load_dataset(..., split="train")` or `load_dataset(...)["train"]`, also after
      `.map(...)`, `.filter(...)`, `.shuffle(...)` or `train_test_split(...)["train"]`);
      reported at the `DataLoader(...)` call;
    - a `DistributedSampler(ds)` without `num_replicas=` / `rank=` where nothing sets up a
      process group; reported at the `DistributedSampler(...)` call.

    ## Why is this bad?
    `MpDeviceLoader` does not split the data: it moves each batch of the loader it wraps to
    this process's device, so without a `DistributedSampler` every replica trains on the
    whole dataset, in the same order: an epoch is `world_size` copies of the data and the
    effective batch is not what the script says. Random data is no exemption: spawned
    replicas start from torch's fixed default seed, so `torch.randn` datasets are identical
    on every replica. A `DistributedSampler` that is given neither `num_replicas` nor `rank`
    asks the default process group, and raises `ValueError: Default process group has not
    been initialized` when there is none.

    ## Known problems
    Not reported: a dataset that arrives as a parameter or from a helper of another module
    (it may be sharded already), datasets built per rank (a path, split or argument that
    names the rank or world size, `split_dataset_by_node`, `.shard(...)`, a dataset class
    that asks for them), `IterableDataset`s (they shard themselves; also
    `load_dataset(..., streaming=True)`), `load_dataset` with several splits, loaders with a batch sampler or a
    custom sampler, SPMD programs (one process per host, the batch is sharded by
    `input_sharding`), training frameworks (Lightning and Accelerate add the sampler),
    `xu.SampleGenerator` data, single-process runs (`nprocs=1`,
    `debug_single_process=True`) and the single-replica branch of a world-size test (the
    `else` of `if xr.world_size() > 1:`), and a `DistributedSampler(ds)` in a module that calls
    `init_process_group` (with `"xla"` and `init_method="xla://"` it reads
    `xr.world_size()` / `xr.global_ordinal()`) or an imported helper named like a
    distributed set-up. A sampler with a hard-coded world size or a removed API
    (`xm.xrt_world_size()`) is left to XLA109 / XLA801 / XLA802.

    ## Example
    ```python
    def _mp_fn(index):
        data = TensorDataset(torch.randn(256, 10), torch.randint(0, 2, (256,)))
        loader = DataLoader(data, batch_size=32, shuffle=True, drop_last=True)
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr

    def _mp_fn(index):
        data = TensorDataset(torch.randn(256, 10), torch.randint(0, 2, (256,)))
        sampler = DistributedSampler(data, num_replicas=xr.world_size(), rank=xr.global_ordinal())
        loader = DataLoader(data, batch_size=32, sampler=sampler, drop_last=True)
        # and sampler.set_epoch(epoch) at the start of each epoch
    ```

    ## References
    - torch_xla `test/test_train_mp_mnist.py`, `test/test_train_mp_imagenet.py` (the
      `DistributedSampler(num_replicas=xr.world_size(), rank=xr.global_ordinal())` they build)
    - torch_xla `torch_xla/distributed/parallel_loader.py`: `MpDeviceLoader` wraps one
      device's `ParallelLoader`; pytorch/xla#7904 ("parallel_loader doesn't shard data")
    - torch_xla `torch_xla/_internal/rendezvous.py` (`xla://` gives the process group the
      runtime's world size and ordinal)
    - Applies to torch_xla 2.0-2.9 (`torch_xla.runtime` from 2.1; `xm.xrt_world_size()` /
      `xm.get_ordinal()` before).
    """

    code = "XLA303"
    fix_applicability = "unsafe"

    reported_at = 'the `DataLoader(...)` call, or the `DistributedSampler(ds)` call when no process group is set up'
    name = "distributed-sampler-missing-or-unbound"
    message = "every replica reads all the data"
    fix = "pass sampler=DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "def train(index):\n"
        "    data = TensorDataset(torch.randn(64, 4))\n"
        "    for (x,) in DataLoader(data, batch_size=8, drop_last=True):\n"
        "        model(x.to(torch_xla.device())).sum().backward()\n"
        "        xm.optimizer_step(opt, barrier=True)\n"
        "torch_xla.launch(train)\n",
        "import torch, torch_xla\nfrom torch.utils.data import DistributedSampler\n"
        "def train(index, data):\n"
        "    sampler = DistributedSampler(data)\n"
        "torch_xla.launch(train, args=([],))\n",
    ]
    good = [
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n"
        "from torch.utils.data import DataLoader, DistributedSampler, TensorDataset\n"
        "def train(index):\n"
        "    data = TensorDataset(torch.randn(64, 4))\n"
        "    sampler = DistributedSampler(data, num_replicas=xr.world_size(), rank=xr.global_ordinal())\n"
        "    for (x,) in DataLoader(data, batch_size=8, sampler=sampler, drop_last=True):\n"
        "        model(x.to(torch_xla.device())).sum().backward()\n"
        "        xm.optimizer_step(opt, barrier=True)\n"
        "torch_xla.launch(train)\n",
        "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "from torch.utils.data import DataLoader\n"
        "def train(index, data):\n"
        "    for x in DataLoader(data, batch_size=8, drop_last=True):  # data may be sharded: unknown\n"
        "        model(x.to(torch_xla.device())).sum().backward()\n"
        "        xm.optimizer_step(opt, barrier=True)\n"
        "torch_xla.launch(train, args=([],))\n",
    ]

    def check(self, model):
        loaders, samplers = model.launched_step_loaders(), model.distributed_samplers()
        if not (loaders or samplers) or model.uses_spmd() or model.uses_framework():
            return
        shard = _shard_args(self.settings)
        for call, ctx in loaders:
            if not model.in_xla_code(ctx) or single_replica_branch(model, ctx):
                continue  # the else of `if xr.world_size() > 1:` runs with one replica only
            kind = model.sampler_kind(call, ctx)
            if kind not in ("none", "whole"):
                continue
            dataset = model.kwarg(call, "dataset", 0)
            if not isinstance(dataset, ast.AST) or not model.dataset_built_here(dataset, ctx):
                continue
            name = dataset.id if type(dataset) is ast.Name and len(dataset.id) <= 16 else "ds"
            if kind == "whole":
                yield self.finding(call, "whole-dataset sampler on every replica",
                                   f"use DistributedSampler({name}, {shard})")
            else:
                yield self.finding(call, fix=f"pass sampler=DistributedSampler({name}, {shard})")
        if model.process_group_possible():
            return
        for call, ctx in samplers:
            replicas, rank = model.kwarg(call, "num_replicas", 1), model.kwarg(call, "rank", 2)
            if replicas is UNKNOWN or rank is UNKNOWN:
                continue
            if any(_reported_elsewhere(model, arg, ctx) for arg in (replicas, rank)):
                continue
            missing = [name for name, arg in (("num_replicas", replicas), ("rank", rank))
                       if arg is None or model.const(arg, ctx) is None]
            if not missing:
                continue
            given = dict(zip(("num_replicas", "rank"), shard.split(", ")))
            yield self.finding(call, f"DistributedSampler without {'/'.join(missing)} raises ValueError",
                               "pass " + ", ".join(given[m] for m in missing))


def _reported_elsewhere(model, arg, ctx) -> bool:
    """A hard-coded count (XLA109) or a removed API (XLA801 / XLA802): one finding per fix."""
    if arg is None:
        return False
    if type(arg) is ast.Constant and type(arg.value) is int and not isinstance(arg.value, bool):
        return True
    return any(type(n) is ast.Call and model.call_name(n, ctx) in _REPORTED_ELSEWHERE for n in ast.walk(arg))

"""XLA3 (data): sharding the data across replicas."""

from __future__ import annotations

import ast
import bisect

from ..model import UNKNOWN
from ..model.loaders import runs_once
from ..model.scopes import Ctx
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
            name = _dataset_text(dataset)
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


def _dataset_text(dataset) -> str:
    """How the message names the dataset: the code's own name or ``self.`` chain (up to 32
    characters), else ``<dataset>`` (a placeholder, not a name the code lacks)."""
    parts = []
    node = dataset
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        text = ".".join([node.id, *reversed(parts)])
        if len(text) <= 32:
            return text
    return "<dataset>"


def _reported_elsewhere(model, arg, ctx) -> bool:
    """A hard-coded count (XLA109) or a removed API (XLA801 / XLA802): one finding per fix."""
    if arg is None:
        return False
    if type(arg) is ast.Constant and type(arg.value) is int and not isinstance(arg.value, bool):
        return True
    return any(type(n) is ast.Call and model.call_name(n, ctx) in _REPORTED_ELSEWHERE for n in ast.walk(arg))


#: builtins and progress bars that iterate the object they are given (the loop consumes it)
_PASS_THROUGH = frozenset({"enumerate", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm",
                           "tqdm.std.tqdm"})
_PARALLEL_LOADER = "torch_xla.distributed.parallel_loader.ParallelLoader"


def _one_shot_origins(model, expr, ctx, names: list, depth: int = 0):
    """The ``pl.ParallelLoader(...)`` calls a loop's iterable is drawn from, through names,
    ``.per_device_loader(dev)``, ``enumerate`` / ``tqdm`` and module helpers (or methods)
    returning one: ``(the ParallelLoader call, where it is built, that place's context)``,
    the place being the call of the helper for one built in a helper; None when any value
    it may hold is something else or cannot be seen. ``names`` collects
    the ``ast.Name`` reads followed: ``(name, ctx, ids of the values followed)``, and the
    names in the device ``per_device_loader`` is asked for: ``(name, ctx, None)``."""
    if depth > 8 or len(names) > 32:  # bounded work per loop
        return None
    t = type(expr)
    if t is ast.Name:
        values = model.values(expr, ctx)
        if not values:
            return None
        names.append((expr, ctx, {id(v) for v, _ in values}))
        out = []
        for v, vctx in values:
            found = _one_shot_origins(model, v, vctx, names, depth + 1)
            if found is None:
                return None
            out.extend(found)
        return out
    if t is not ast.Call:
        return None
    q = model.call_name(expr, ctx)
    if q == _PARALLEL_LOADER:
        return [(expr, expr, ctx)]
    f = expr.func
    if type(f) is ast.Attribute and f.attr == "per_device_loader":
        for a in list(expr.args) + [k.value for k in expr.keywords]:  # the device asked for
            names.extend((n, ctx, None) for n in ast.walk(a) if type(n) is ast.Name)
        return _one_shot_origins(model, f.value, ctx, names, depth + 1)
    if (q in _PASS_THROUGH or (type(f) is ast.Name and f.id == "enumerate" and q is None
                               and model.lookup(f.id, ctx, None) is None)) \
            and expr.args and type(expr.args[0]) is not ast.Starred:
        return _one_shot_origins(model, expr.args[0], ctx, names, depth + 1)
    if q is None:  # a module helper (or method) that returns one: built where it is called
        funcs = model.function_of(f, ctx)
        if len(funcs) != 1 or not funcs[0].returns:
            return None
        out = []
        for value, vctx in funcs[0].returns:
            found = _one_shot_origins(model, value, vctx, names, depth + 1)
            if found is None:
                return None
            out.extend((report, expr, ctx) for report, _, _ in found)
        return out
    return None


def _single_pass(model, loop) -> bool:
    """The loop visibly runs its body at most once: ``for _ in range(1)``, over a one-item
    list or tuple, or with a ``break`` / ``return`` among its own statements (memoised)."""
    key = ("single_pass", id(loop))
    found = model._cache.get(key)
    if found is None:
        found = model._cache[key] = runs_once(loop.node)
    return found


def _rebound_in(model, names, outer) -> bool:
    """Is any of the names followed bound inside the loop ``outer`` to something else than
    what was followed (rebuilt there, also after the inner loop: ``para =
    pl.ParallelLoader(...)`` at the end of an epoch), or a name of the device asked for bound
    there at all (``for device in devices: para.per_device_loader(device)``: one queue per
    device, not an epoch loop)? Bounded: the bindings inside the loop
    are found by bisection, and at most the followed ones (8) are skipped."""
    lo, hi = outer.node.lineno, outer.node.end_lineno or outer.node.lineno
    for name, ctx, followed in names:
        if followed is None:  # a device name: bound in the loop means one device per pass
            followed = frozenset()
        bindings = model.lookup(name.id, ctx, None) or ()
        key = ("binding_lines", id(bindings))
        lines = model._cache.get(key)
        if lines is None or lines[0] is not bindings:
            lines = model._cache[key] = (bindings, sorted((b[0], i) for i, b in enumerate(bindings)))
        order = lines[1]
        i = bisect.bisect_left(order, (lo, -1))
        while i < len(order) and order[i][0] <= hi:
            if id(bindings[order[i][1]][2]) not in followed:
                return True
            i += 1
    return False


@rule
class ParallelLoaderReusedAcrossEpochs(Rule):
    """## What it does
    Flags a `pl.ParallelLoader(...)` built before a loop (an epoch loop) and iterated by a
    loop inside it: `for batch in para_loader.per_device_loader(device)`, a
    `per_device_loader(device)` bound before the epoch loop, through `enumerate`, `tqdm`,
    names, and a module helper or method that returns one (`train_dataloader =
    self.get_train_dataloader()` before the epoch loop). Reported at the
    `pl.ParallelLoader(...)` call.

    ## Why is this bad?
    `ParallelLoader` starts its feeder threads when it is built; they run through the wrapped
    `DataLoader` once and close the per-device queues. Its `per_device_loader(device)` (and
    a new `per_device_loader` asked of the same `ParallelLoader`) yields the batches of that
    one pass: from the second epoch the loop gets nothing, so nothing trains and nothing fails
    (transformers#4467). `pl.MpDeviceLoader` builds a new `ParallelLoader` each time it is
    iterated. Measured on torch_xla 2.9 (CPU): a `ParallelLoader` over a 4-batch loader
    iterated in 3 epochs gave 4, 0, 0 batches (also with `per_device_loader(dev)` asked in
    each epoch); `MpDeviceLoader` gave 4, 4, 4.

    ## Known problems
    Not reported: `pl.MpDeviceLoader`, a `ParallelLoader` built inside the epoch loop (or
    rebuilt there, also at its end; a helper called in each epoch), a loop over the devices that asks each pass for
    another device's queue (`for device in devices: para.per_device_loader(device)`), loops that visibly run once (`for _ in range(1)`, a
    `break` among the loop's own statements), and a `ParallelLoader` built in another
    function than the epoch loop (an attribute set in `__init__`, a loader handed to a
    per-epoch function): what runs per epoch there is not followed, except in project
    mode, where a function of the module that builds and returns one is reported when a
    caller in another module iterates what it returns once per epoch (`batches =
    wrap_loader(loader)` before the epoch loop, or a base class's `self.wrap_loader(...)` on
    an object of the overriding class). Batches drawn with
    `next(it)` are not this rule's: on a spent loader `next` raises `StopIteration`, loudly.

    The fix (safe) rewrites `pl.ParallelLoader(loader, [dev]).per_device_loader(dev)` to
    `pl.MpDeviceLoader(loader, dev)` (other keywords kept), and `para =
    pl.ParallelLoader(loader, [dev])` to `para = pl.MpDeviceLoader(loader, dev)` with each
    `para.per_device_loader(dev)` of its function to `para`, when the device list has one
    device and every use of `para` asks that device; anything else is left to you.

    ## Example
    ```python
    train_loader = pl.ParallelLoader(loader, [device]).per_device_loader(device)
    for epoch in range(num_epochs):
        for batch in train_loader:
            ...
    ```

    ## Use instead
    ```python
    train_loader = pl.MpDeviceLoader(loader, device)
    for epoch in range(num_epochs):
        for batch in train_loader:
            ...
    ```

    ## References
    - torch_xla `torch_xla/distributed/parallel_loader.py`: `ParallelLoader.__init__` starts
      `_loader_worker` threads that iterate the loader once; `MpDeviceLoader.__iter__` builds a
      new `ParallelLoader` per iteration (2.0-2.9)
    - huggingface/transformers#4467 (a `ParallelLoader` built before the epoch loop: training
      stopped after the first epoch)
    - Applies to torch_xla 2.0-2.9; verified on 2.9 (CPU), as above.
    """

    code = "XLA306"
    name = "parallel-loader-reused-across-epochs"
    message = "pl.ParallelLoader built before the epoch loop is empty from its second pass"
    fix = "use pl.MpDeviceLoader(loader, device)"
    severity = "E"
    versions = "2.0+"
    reported_at = "the `pl.ParallelLoader(...)` call"
    fix_applicability = "safe"
    bad = [
        "import torch_xla\nimport torch_xla.distributed.parallel_loader as pl\n"
        "def train(loader, model, epochs):\n"
        "    device = torch_xla.device()\n"
        "    batches = pl.ParallelLoader(loader, [device]).per_device_loader(device)\n"
        "    for epoch in range(epochs):\n"
        "        for x in batches:\n"
        "            model(x)\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.distributed.parallel_loader as pl\n"
        "def train(loader, model, epochs):\n"
        "    device = torch_xla.device()\n"
        "    batches = pl.MpDeviceLoader(loader, device)\n"
        "    for epoch in range(epochs):\n"
        "        for x in batches:\n"
        "            model(x)\n",
        "import torch_xla\nimport torch_xla.distributed.parallel_loader as pl\n"
        "def train(loader, model, epochs):\n"
        "    device = torch_xla.device()\n"
        "    for epoch in range(epochs):\n"
        "        para = pl.ParallelLoader(loader, [device])\n"
        "        for x in para.per_device_loader(device):\n"
        "            model(x)\n",
    ]

    def check(self, model):
        if not model.calls_to(_PARALLEL_LOADER):
            return
        done: set[int] = set()
        for loop in model.loops:
            outers = loop.ctx.loops
            if not outers or not model.in_xla_code(loop.ctx):
                continue
            if type(loop.node) is not ast.For:
                continue  # (next(it) on a spent loader raises StopIteration: loud, not this rule)
            for it in (loop.node.iter,):
                names: list = []
                origins = _one_shot_origins(model, it, loop.ctx, names)
                if not origins:
                    continue
                for call, _, cctx in origins:
                    if id(call) in done or cctx.func is not loop.ctx.func:
                        continue
                    epoch = next((o for o in outers if o not in cctx.loops and not _single_pass(model, o)), None)
                    if epoch is None or _rebound_in(model, names, epoch):
                        continue
                    done.add(id(call))
                    yield self.finding(call)
        # project mode: a function that builds and returns one, whose caller in another
        # module (or a base class's self.wrap_loader(...) there) iterates it once per epoch
        for func in model.functions:
            if not func.returns or func.scope is None or not model.in_xla_code(Ctx(func.scope, func, (), ())):
                continue
            origins: list | None = []
            for value, vctx in func.returns:
                found = _one_shot_origins(model, value, vctx, []) if value is not None and vctx is not None else None
                if not found:
                    origins = None
                    break
                origins.extend(found)
            if not origins or any(cctx.func is not func for _, _, cctx in origins) \
                    or all(id(call) in done for call, _, _ in origins) or not model.project_reiterated(func):
                continue
            for call, _, _ in origins:
                if id(call) not in done:
                    done.add(id(call))
                    yield self.finding(call)


_DATALOADER = "torch.utils.data.DataLoader"
_PARTIAL = ("functools.partial",)
#: Hugging Face trainers (they build the loaders from ``args.dataloader_num_workers``)
_TRAINERS = ("transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
             "transformers.trainer_seq2seq.Seq2SeqTrainer")
_TRAINING_ARGS = ("transformers.TrainingArguments", "transformers.training_args.TrainingArguments",
                  "transformers.Seq2SeqTrainingArguments", "transformers.training_args_seq2seq.Seq2SeqTrainingArguments")
#: DataLoader parameters whose objects the workers receive, with their positions
_WORKER_ARGS = (("dataset", 0), ("collate_fn", 6), ("worker_init_fn", 10))


@rule
class LoaderWorkersHoldDeviceState(Rule):
    """## What it does
    Flags a `DataLoader(...)` with worker processes (`num_workers` visibly not 0) whose
    `dataset`, `collate_fn` or `worker_init_fn` holds a tensor or module on the XLA device
    when the loader is built: an object constructed with one (`Collator(model)`,
    `TensorDataset(x.to(device))`, `functools.partial(collate, model=model)`), a lambda
    that reads one, or an instance of a module class whose `__init__` stores a device
    tensor on `self` (`self.x = x.to(device)`, `self.pad = torch.full(..., device=device)`). Also a Hugging Face `Trainer` /
    `Seq2SeqTrainer` whose `TrainingArguments` set `dataloader_num_workers` above 0 and
    whose `data_collator` holds a module (`DataCollatorForSeq2Seq(tokenizer, model=model)`,
    the pytorch/xla#4131 shape): the Trainer moves its model to the device before it builds
    the loaders. Reported at that argument.

    ## Why is this bad?
    Each worker gets its own copy of the dataset and the collate function. With the
    `spawn` / `forkserver` start methods (forkserver is Linux's default from Python 3.14)
    they are pickled, and an XLA tensor has no storage to share: the loader fails at its
    first iteration ("XLA tensors do not have storage", pytorch/xla#4131, where the
    collator held the model; on 2.9 `RuntimeError: _share_fd_: only available on CPU`,
    the runtime set's measurement). With `fork` the worker inherits the tensors but not the
    runtime behind them: a worker that reads one hangs, and one that never touches the
    state it holds runs, so with `fork` (Linux's default before Python 3.14) a collator that
    only carries the model is a failure waiting for a change of start method or Python.

    ## Known problems
    Only objects whose device state the model sees at the loader's line: a collator
    holding a tokenizer or a config, a module moved to the device after the loader is
    built, a device reached only inside a method, and a `num_workers` that is not a visible
    constant (`args.num_workers`) are not reported.

    Measured on 2.9 (CPU, one replica, `DataLoader(num_workers=2)`): with
    `multiprocessing_context="spawn"` a collator holding an XLA module, a dataset storing
    `x.to(device)` and a `TensorDataset` of device tensors each fail with `RuntimeError:
    _share_fd_: only available on CPU` (the same loader over CPU data runs); with `fork`
    the dataset reading its device tensor and the collator reading the module's weight
    hang (killed after 120 s), and a collator that never touches the module it holds runs.

    ## Example
    ```python
    model = Net().to(torch_xla.device())
    loader = DataLoader(ds, batch_size=32, num_workers=4, collate_fn=Collator(model))
    ```

    ## Use instead
    ```python
    loader = DataLoader(ds, batch_size=32, num_workers=4, collate_fn=Collator(tokenizer))
    # keep device work in the training step: batch = batch.to(device) / MpDeviceLoader
    ```
    Or `num_workers=0` when the collator must run the model.

    ## References
    - pytorch/xla#4131 ("the dataloader instance had a reference to the `model` in its
      `collate_fn`"; `dataloader_num_workers=0` as the workaround)
    - torch `torch/utils/data/dataloader.py` (`_MultiProcessingDataLoaderIter` hands the
      dataset and `collate_fn` to each worker process)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA305"
    name = "loader-workers-hold-device-state"
    message = "DataLoader workers get XLA device state: pickling fails or they hang"
    fix = "keep device tensors/modules out of dataset and collate_fn, or num_workers=0"
    severity = "E"
    versions = "2.0+"
    reported_at = 'the `dataset` / `collate_fn` / `worker_init_fn` argument that holds the device state'
    bad = ["import torch\nimport torch_xla\nfrom torch.utils.data import DataLoader\n"
           "class Collator:\n    def __init__(self, model):\n        self.model = model\n"
           "model = torch.nn.Linear(2, 2).to(torch_xla.device())\n"
           "loader = DataLoader(range(8), num_workers=2, collate_fn=Collator(model))\n"]
    good = ["import torch\nimport torch_xla\nfrom torch.utils.data import DataLoader\n"
            "class Collator:\n    def __init__(self, model):\n        self.model = model\n"
            "model = torch.nn.Linear(2, 2).to(torch_xla.device())\n"
            "loader = DataLoader(range(8), num_workers=0, collate_fn=Collator(model))\n"]

    def check(self, model):
        for call, ctx in model.calls_to(_DATALOADER):
            if not model.in_xla_code(ctx) or not self._workers(model, call, ctx):
                continue
            for name, pos in _WORKER_ARGS:
                arg = model.kwarg(call, name, pos)
                if isinstance(arg, ast.AST) and self._holds(model, arg, ctx, call.lineno, 0):
                    yield self.finding(arg)
        for call, ctx in model.calls_to(*_TRAINERS):
            # the Trainer moves its model to the XLA device before it builds the loaders: a
            # collator holding a module holds device state in the workers (pytorch/xla#4131)
            if not model.in_xla_code(ctx) or not self._trainer_workers(model, call, ctx):
                continue
            arg = model.kwarg(call, "data_collator", 2)
            if isinstance(arg, ast.AST) and self._holds(model, arg, ctx, call.lineno, 0, modules=True):
                yield self.finding(arg)

    @staticmethod
    def _trainer_workers(model, call, ctx) -> bool:
        """The Trainer's ``args=`` is a ``TrainingArguments(...)`` with ``dataloader_num_workers``
        a visible constant above 0."""
        args = model.kwarg(call, "args", 1)
        if not isinstance(args, ast.AST):
            return False
        vals = model.resolve_values(args, ctx) if type(args) is ast.Name else [(args, ctx)]
        if not vals or len(vals) != 1 or type(vals[0][0]) is not ast.Call \
                or model.call_name(vals[0][0], vals[0][1]) not in _TRAINING_ARGS:
            return False
        n = model.kwarg(vals[0][0], "dataloader_num_workers")
        value = model.const(n, vals[0][1]) if isinstance(n, ast.AST) else None
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    @staticmethod
    def _workers(model, call, ctx) -> bool:
        n = model.kwarg(call, "num_workers", 5)
        if not isinstance(n, ast.AST):
            return False
        value = model.const(n, ctx)
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    def _holds(self, model, expr, ctx, line: int, depth: int, modules: bool = False) -> bool:
        """``expr`` (a worker argument) holds a device tensor or module at ``line`` (with
        ``modules``, any module: the caller moves it to the device)."""
        if depth > 4:
            return False
        t = type(expr)
        if t is ast.Name:
            vals = model.values(expr, ctx)
            return bool(vals) and len(vals) == 1 and vals[0][0] is not None and type(vals[0][0]) in (
                ast.Call, ast.Lambda) and self._holds(model, vals[0][0], vals[0][1], line, depth + 1, modules)
        if t is ast.Lambda:
            return any(type(n) is ast.Name and type(n.ctx) is ast.Load and n.id not in _lambda_params(expr)
                       and self._device_state(model, n, ctx, line, modules)
                       for n in ast.walk(expr.body))
        if t is not ast.Call:
            return False
        q = model.call_name(expr, ctx)
        if q is not None and q not in _PARTIAL and not q.startswith("torch.utils.data.") and not (
                modules and q.startswith("transformers.")):
            return False  # a library object (a dataset package's, a collator of another library)
        args = [a.value if type(a) is ast.Starred else a for a in expr.args] + [k.value for k in expr.keywords]
        if any(self._device_state(model, a, ctx, line, modules) for a in args):
            return True
        f = expr.func
        cls = model.class_named(f.id, ctx) if type(f) is ast.Name else None
        return cls is not None and self._class_stores_device(model, cls, expr, ctx)

    @staticmethod
    def _device_state(model, expr, ctx, line: int, modules: bool = False) -> bool:
        """A tensor on the XLA device, or a module moved there before ``line`` (any module
        with ``modules``)."""
        if model.tensor_kind(expr, ctx) == "device":
            return True
        if modules and type(expr) in (ast.Name, ast.Attribute) and model.is_model(expr, ctx):
            return True
        if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in ("to", "xla") \
                and model.move_target(expr, ctx) == "xla":
            return True
        if type(expr) is ast.Name and model.is_model(expr, ctx):
            vals = model.values(expr, ctx) or ()
            if any(type(v) is ast.Call and _moved_to_xla(model, v, c) for v, c in vals):
                return True
            return any(line_ < line and model.move_target(mcall, mctx) == "xla" and mctx.scope is ctx.scope
                       for line_, mcall, mctx in model.moves(expr.id, ctx))
        return False

    @staticmethod
    def _class_stores_device(model, cls, call, ctx) -> bool:
        """``cls.__init__`` stores a tensor moved to, or made by a torch factory on
        (``torch.full(..., device=device)``), the XLA device on ``self``: with a device the
        model sees as XLA, or with the ``__init__`` parameter this call passes the XLA
        device to."""
        init = cls.methods.get("__init__")
        if init is None:
            return False
        params = init.params[1:]
        xla_params = set()
        for i, p in enumerate(params):
            arg = model.kwarg(call, p, i)
            if isinstance(arg, ast.AST) and model.device_place(arg, ctx) == "xla":
                xla_params.add(p)
        stores = model._cache.get("xla305_stores")
        if stores is None:  # self.x = ... stores by function, indexed once
            stores = model._cache["xla305_stores"] = {}
            for target, value, sctx in model.attr_stores:
                if sctx.func is not None and type(target.value) is ast.Name and target.value.id == "self":
                    stores.setdefault(id(sctx.func), []).append((value, sctx))
        for value, sctx in stores.get(id(init), ()):
            for n in ast.walk(value):
                if type(n) is ast.Call and any(k.arg == "device" for k in n.keywords) \
                        and (model.call_name(n, sctx) or "").startswith("torch."):
                    dev = model.kwarg(n, "device")  # torch.full(shape, v, device=device): made there
                    if (type(dev) is ast.Name and dev.id in xla_params) or model.device_place(dev, sctx) == "xla":
                        return True
                    continue
                if type(n) is not ast.Call or type(n.func) is not ast.Attribute or n.func.attr != "to":
                    continue
                dev = model.kwarg(n, "device", 0)
                if type(dev) is ast.Name and dev.id in xla_params:
                    return True
                if model.move_target(n, sctx) == "xla":
                    return True
        return False


def _moved_to_xla(model, value, ctx) -> bool:
    """``Net().to(dev)`` / ``Net().to(dev).train()``: a move to the XLA device in the chain."""
    node = value
    for _ in range(8):
        if type(node) is not ast.Call or type(node.func) is not ast.Attribute:
            return False
        if node.func.attr in ("to", "xla") and model.move_target(node, ctx) == "xla":
            return True
        node = node.func.value
    return False


def _lambda_params(lam) -> set[str]:
    a = lam.args
    names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    return names

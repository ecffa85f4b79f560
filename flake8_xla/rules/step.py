"""XLA2: gradient reduction and the optimizer step; XLA3: data loading and step sync."""

from __future__ import annotations

import ast

from ..registry import Rule, rule
from ._common import render

GRADIENT_REDUCERS = (
    "torch_xla.core.xla_model.reduce_gradients",
    "torch_xla.core.xla_model.all_reduce_bucketized_gradients",
)
REDUCERS = (  # reduce gradients when given gradients
    "torch_xla.core.xla_model.all_reduce",
    "torch_xla.core.xla_model.reduce_scatter",
    "torch.distributed.all_reduce",
    "torch.distributed.reduce_scatter",
)


@rule
class UnreducedOptimizerStep(Rule):
    """## What it does
    Flags `optimizer.step()` (any receiver holding a torch optimizer) in a step loop of
    code started by a multi-process XLA launcher, or in a helper such a loop calls, when
    nothing in the module reduces gradients across replicas.

    ## Why is this bad?
    In native XLA data parallel each replica computes gradients on its own shard; nothing
    averages them unless `xm.optimizer_step` (all-reduce, then step) or a wrapper does.
    Every replica silently trains its own model; no error is raised.

    ## Known problems
    Not reported when the module uses DDP, XLA FSDP, FSDPv2 / SPMD, ZeRO-1, torch FSDP or
    a training framework (Accelerate, Lightning, HF Trainer); when `xm.reduce_gradients`
    or an `all_reduce` runs earlier in the same loop body; without a launcher (single
    device); with `nprocs=1` or `debug_single_process=True`. An `all_reduce` counts only
    when its arguments are gradients (`p.grad`, `grads`), not a loss reduced for logging.

    ## Example
    ```python
    loss.backward()
    optimizer.step()
    ```

    ## Use instead
    ```python
    loss.backward()
    xm.optimizer_step(optimizer)      # all-reduce(mean) of the gradients, then step
    ```
    or reduce first when you must touch the reduced gradients:
    `xm.reduce_gradients(optimizer); clip_grad_norm_(...); optimizer.step()`.

    ## References
    - torch_xla `README.md` multi-processing diff (`+ xm.optimizer_step(optimizer)` "combines gradients across replicas")
    - torch_xla `torch_xla/core/xla_model.py` `optimizer_step` -> `reduce_gradients`
    - torch_xla `docs/source/perf/fsdp_collectives.md` (FSDP calls `optimizer.step()` directly)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA201"
    name = "unreduced-optimizer-step"
    message = "optimizer.step() without gradient reduction across replicas (each replica trains on its own gradients)"
    fix = "call xm.optimizer_step(optimizer), or wrap the model in DDP(model, gradient_as_bucket_view=True)"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch_xla\n"
        "def f(i, loader, model, optimizer):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "torch_xla.launch(f, args=(None, None, None))\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(i, loader, model, optimizer):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.reduce_gradients(optimizer)\n"
        "        optimizer.step()\n"
        "torch_xla.launch(f, args=(None, None, None))\n",
        "import torch_xla\n"
        "def f(i, loader, model, optimizer):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "torch_xla.launch(f, args=(None, None, None), debug_single_process=True)\n",
    ]

    def check(self, model):
        if not model.launched(multi_only=True) or model.reduces_gradients_elsewhere():
            return  # nothing launched on several replicas, or something reduces the gradients
        seen = set()
        for loop in model.loops:
            ctx = loop.ctx
            if not (model.is_step_loop(loop) and model.is_launched(ctx, multi_only=True) and model.in_xla_code(ctx)):
                continue
            reductions = [c.lineno for c, x in loop.calls if _reduces_gradients(model, c, x)]
            for call, cctx in loop.calls:
                if cctx.loops[-1] is loop and self._unreduced(model, call, cctx, reductions):
                    seen.add(id(call))
                    yield self.finding(call)
            if reductions:
                continue
            # a helper called from the loop body steps once per iteration too
            roots = [f for call, cctx in loop.calls for f in model.function_of(call.func, cctx)]
            reachable = model.reachable(roots)
            for func in model.functions:
                if id(func) not in reachable:
                    continue
                helper_reductions = [c.lineno for c, x in func.calls if _reduces_gradients(model, c, x)]
                for call, cctx in func.calls:
                    if not cctx.loops and id(call) not in seen and self._unreduced(model, call, cctx, helper_reductions):
                        seen.add(id(call))
                        yield self.finding(call)

    @staticmethod
    def _unreduced(model, call, ctx, reductions) -> bool:
        return (model.is_optimizer_step(call, ctx) and model.in_xla_code(ctx)
                and not any(line <= call.lineno for line in reductions)
                and not _overridden(model, ctx.func))


def _overridden(model, func) -> bool:
    """A method that a subclass in the module overrides: which one runs is not known here
    (``TrainBase.run_optimizer`` vs ``TrainXlaDP.run_optimizer`` calling xm.optimizer_step)."""
    if func is None or func.cls is None:
        return False
    for cls in model.classes:
        if cls is not func.cls and func.name in cls.methods \
                and any(c is func.cls for c in model.mro(cls)[1:]):
            return True
    return False


_MAYBE_REDUCER = ("reduce", "all_reduce", "allreduce", "sync_grad", "average_grad", "grad_sync")


def _reduces_gradients(model, call, ctx) -> bool:
    """``xm.reduce_gradients(opt)``, an all-reduce whose arguments are gradients, a module
    helper that does one of those (followed iteratively), or an imported non-torch helper
    whose name says it reduces (``allreduce_gradients(model)``: unknown, so not a finding)."""
    todo = [(call, ctx)]
    seen = set()
    while todo:
        c, x = todo.pop()
        q = model.call_name(c, x)
        if q in GRADIENT_REDUCERS:
            return True
        if q in REDUCERS:
            for arg in list(c.args) + [k.value for k in c.keywords]:
                for node in ast.walk(arg):
                    ident = node.attr if type(node) is ast.Attribute else node.id if type(node) is ast.Name else ""
                    if "grad" in ident.lower():
                        return True
            continue
        if q is not None:
            if not q.startswith(("torch.", "torch_xla.")) and any(w in q.rsplit(".", 1)[-1].lower() for w in _MAYBE_REDUCER):
                return True
            continue
        for func in model.function_of(c.func, x):
            if id(func) not in seen:
                seen.add(id(func))
                todo.extend(func.calls)
    return False


@rule
class LoaderWithoutMpDeviceLoader(Rule):
    """## What it does
    Flags a `torch.utils.data.DataLoader` that a training step loop in XLA code draws its
    batches from: constructed inline, bound to a name or `self.` attribute, returned by a
    module helper or method (`make_loader(ds)`, `self.train_dataloader()`, `loader, sampler
    = make()`), through `enumerate` / `zip` / `itertools.islice` / `tqdm`, or advanced with
    `next(it)` after `it = iter(loader)` (`for step in range(n):`, `while (b := next(it,
    None)) is not None:`); reported at the loop header. A loader passed to a module function
    whose step loop iterates that parameter is reported where it is passed (`fit(model,
    loader)`), since the fix goes there.

    ## Why is this bad?
    `pl.MpDeviceLoader` preloads batches to the device, overlapping host-to-device
    transfers with execution, and cuts the graph (`torch_xla.sync()`) after every batch.
    A plain DataLoader transfers synchronously; and when nothing else syncs per step
    (`xm.optimizer_step` syncs only with `barrier=True`) the lazy graph grows with every
    iteration until it is compiled as one huge graph or runs out of memory.

    ## Known problems
    Not reported for loops that do no backward pass or optimizer step (evaluation), for
    loaders wrapped anywhere on the way (`pl.MpDeviceLoader`,
    `ParallelLoader(...).per_device_loader`, also inside the helper or the callee), for a
    parameter or helper result that cannot be seen, nor for loops that sync every step
    (`with torch_xla.step():`, `torch_xla.sync()`, `xm.mark_step()`,
    `xm.optimizer_step(..., barrier=True)`, a `torch_xla.compile`d step), directly or in a
    helper the loop calls (followed 32 levels): the torch_xla README (2.5-2.9) itself
    iterates a plain DataLoader that way; the loader then only misses prefetching.

    ## Example
    ```python
    for data, target in train_loader:
        ...
        xm.optimizer_step(optimizer)
    ```

    ## Use instead
    ```python
    mp_loader = pl.MpDeviceLoader(train_loader, device)
    for data, target in mp_loader:
        ...
        xm.optimizer_step(optimizer)
    ```

    ## References
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` (`MpDeviceLoader` "can preload the data to the device")
    - torch_xla `torch_xla/distributed/parallel_loader.py` (`MpDeviceLoader`, `PerDeviceLoader.next` syncs)
    - torch_xla `docs/source/learn/xla-advanced.md` "Data Loading" (`barrier=True` without MpDeviceLoader)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA301"
    name = "loader-without-mpdeviceloader"
    message = ("torch DataLoader iterated directly in an XLA training loop with no per-step sync: "
               "the graph grows without bound")
    fix = "wrap it: pl.MpDeviceLoader(loader, device) (import torch_xla.distributed.parallel_loader as pl)"
    severity = "W"
    versions = "2.0+"
    bad = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nfrom torch.utils.data import DataLoader\n"
        "def f(ds, model, opt):\n"
        "    loader = DataLoader(ds, batch_size=8)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\n"
        "from torch.utils.data import DataLoader\n"
        "def f(ds, model, opt, dev):\n"
        "    loader = pl.MpDeviceLoader(DataLoader(ds, batch_size=8), dev)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n"
        "    for x in DataLoader(ds):\n"
        "        model(x)\n",
    ]

    def check(self, model):
        params = model.loader_params()
        for loop, kind in model.unsynced_loader_loops():
            if kind != "plain":
                continue
            node = loop.node
            if type(node) in (ast.For, ast.AsyncFor) and model.loader_kind(node.iter, loop.ctx) == "plain":
                yield self.finding(node)
            else:  # it = iter(loader); for _ in range(n): next(it)
                yield self.finding(node, "torch DataLoader consumed with next() in an XLA training loop with no "
                                         "per-step sync: the graph grows without bound")
        if not params:
            return
        seen = set()
        for func in model.functions:
            names = [name for (fid, name) in params if fid == id(func)]
            if not names:
                continue
            for call, ctx in model.calls_of(func):
                if not model.in_xla_code(ctx):
                    continue
                for name in names:
                    arg = model.argument_for(call, ctx, func, name)
                    if isinstance(arg, ast.AST) and id(arg) not in seen and model.loader_kind(arg, ctx) == "plain":
                        seen.add(id(arg))
                        line = params[(id(func), name)].node.lineno
                        yield self.finding(
                            arg, f"torch DataLoader passed to {func.name}(), whose XLA training loop (line {line}) "
                                 "iterates it with no per-step sync",
                            f"pass pl.MpDeviceLoader({render(arg)}, device) instead",
                        )

"""XLA0: launching processes."""

from __future__ import annotations

import ast

from ..model import UNKNOWN, Ctx
from ..registry import Rule, rule
from ._common import at_least, launch_call, render, str_value


@rule
class SpawnHardcodedNprocs(Rule):
    """## What it does
    Flags `xmp.spawn(...)` given a process count (`nprocs=` or the third positional
    argument) other than the literal `None` or `1`.

    ## Why is this bad?
    Under PJRT the runtime starts one process per device by itself. From torch_xla 2.6
    `spawn` raises `ValueError: Unsupported nprocs (8). Please use nprocs=1 or None`;
    from 2.0 to 2.5 it logs "Unsupported nprocs ... ignoring" and goes on, so the number
    in the script silently means nothing.

    ## Known problems
    A variable is reported unless it visibly holds `1` or `None`: `nprocs=args.num_cores`
    crashes on 2.6+ as soon as the flag is not 1.

    ## Example
    ```python
    xmp.spawn(_mp_fn, args=(flags,), nprocs=8)
    ```

    ## Use instead
    ```python
    torch_xla.launch(_mp_fn, args=(flags,))   # torch_xla >= 2.5; or xmp.spawn(_mp_fn, args=(flags,))
    ```
    For a single-process debug run: `torch_xla.launch(fn, args=..., debug_single_process=True)`.

    ## References
    - torch_xla `torch_xla/_internal/pjrt.py` `spawn()` (ValueError since 2.6, #7971; warning 2.0-2.5)
    - torch_xla `README.md` "Multi processing" diff; `docs/source/learn/pytorch-on-xla-devices.md`
    - Applies to torch_xla 2.0-2.9 (PJRT); under XRT (<= 2.0) nprocs was meaningful.
    """

    code = "XLA001"
    name = "spawn-hardcoded-nprocs"
    message = "xmp.spawn() given a process count"
    fix = "drop nprocs: the runtime starts one process per device"
    severity = "E"
    versions = "2.0+ (ValueError from 2.6)"
    bad = [
        "import torch_xla.distributed.xla_multiprocessing as xmp\n"
        "def f(i): pass\n"
        "xmp.spawn(f, args=(), nprocs=8)\n",
        "from torch_xla.distributed.xla_multiprocessing import spawn\n"
        "def f(i): pass\n"
        "spawn(f, (), 4)\n",
    ]
    good = [
        "import torch_xla.distributed.xla_multiprocessing as xmp\n"
        "def f(i): pass\n"
        "xmp.spawn(f, args=(), nprocs=1)\n"
        "xmp.spawn(f, args=(), nprocs=None)\n"
        "xmp.spawn(f, args=())\n",
    ]

    def check(self, model):
        for call, ctx in model.calls_to("torch_xla.distributed.xla_multiprocessing.spawn"):
            nprocs = model.kwarg(call, "nprocs", 2)
            if nprocs is None or nprocs is UNKNOWN:
                continue
            values = model.const_values(nprocs, ctx)
            if values is not None and all(v is None or (v == 1 and v is not True) for v in values):
                continue  # nprocs=1 if debug else None, NPROCS = 1, ...
            if at_least(self.settings, "2.6"):
                problem = f"xmp.spawn() given nprocs={render(nprocs)}: raises ValueError on torch_xla >= 2.6 (only None or 1 are accepted)"
            else:
                problem = f"xmp.spawn() given nprocs={render(nprocs)}: PJRT ignores it (torch_xla 2.0-2.5) and 2.6+ raises ValueError"
            fix = self.fix
            if at_least(self.settings, "2.5"):
                fix += f"; or use {launch_call(self.settings)}"
            yield self.finding(nprocs, problem, fix)


@rule
class TorchMpSpawnWithXla(Rule):
    """## What it does
    Flags `torch.multiprocessing.spawn(...)` / `start_processes(...)` (any alias) in XLA
    code when the target does XLA or torch work, or cannot be seen.

    ## Why is this bad?
    The XLA launcher gives each process its device, its ordinal and the runtime topology
    (`PJRT_LOCAL_PROCESS_RANK`, TPU process bounds, ...). Processes started by plain
    `torch.multiprocessing` get none of it, so they race for the same chips or see the
    wrong world.

    ## Known problems
    A target that only does CPU work (a pre-processing pool) is not reported; a target
    defined in another module is reported, since it cannot be seen.

    ## Example
    ```python
    import torch.multiprocessing as mp
    mp.spawn(_mp_fn, args=(), nprocs=world_size)
    ```

    ## Use instead
    ```python
    import torch_xla
    torch_xla.launch(_mp_fn, args=())        # torch_xla >= 2.5; or xmp.spawn(_mp_fn, args=())
    ```

    ## References
    - torch_xla `README.md` "Multi processing" diff (`mp.spawn` -> `xmp.spawn`)
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` "Running on Multiple XLA Devices with Multi-processing"
    - torch_xla `torch_xla/_internal/pjrt.py` `run_multiprocess`
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA002"
    name = "torch-mp-spawn-with-xla"
    message = "torch.multiprocessing starts XLA workers without the XLA runtime's per-process set-up"
    fix = "use torch_xla.launch(fn, args=...) (torch_xla >= 2.5) or xmp.spawn(fn, args=...)"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch\nimport torch.multiprocessing as mp\nimport torch_xla\n"
        "def train(rank):\n    torch.ones(2, device=torch_xla.device())\n"
        "mp.spawn(train, nprocs=4)\n",
    ]
    good = [
        "import torch.multiprocessing as mp\nimport torch_xla\n"
        "def prep(path):\n    return path.upper()\n"
        "mp.spawn(prep, nprocs=2)\n",
    ]

    def check(self, model):
        fix = self.fix if at_least(self.settings, "2.5") else "use xmp.spawn(fn, args=...)"
        for call, ctx, targets, _ in model.launches():
            q = model.call_name(call, ctx)
            if q not in model.TORCH_LAUNCHERS:
                continue
            if targets and not any(_does_device_work(model, f) for f in _funcs(model, targets)):
                continue
            yield self.finding(call, fix=fix)


def _funcs(model, roots):
    ids = model.reachable(roots)
    return [f for f in model.functions if id(f) in ids]


DEVICE_WORK = ("torch_xla", "torch.distributed", "torch.nn", "torch.optim", "torch.cuda", "torch.autograd",
               "torch.device")


def _does_device_work(model, func) -> bool:
    """Does the function touch a device: torch_xla, models, optimizers, collectives,
    ``.to()`` / ``.cuda()`` / ``.backward()``, or tensors created with ``device=``?
    CPU work (``torch.load(..., map_location="cpu")``, ``torch.save``, ``torch.cat``) is not."""
    for call, ctx in func.calls:
        q = model.call_name(call, ctx)
        if q is not None and (q == "torch_xla" or q.startswith(tuple(p + "." for p in DEVICE_WORK) + ("torch_xla",))
                              or q in DEVICE_WORK):
            return True
        if type(call.func) is ast.Attribute and call.func.attr in ("backward", "to", "cuda"):
            return True
        for kw in call.keywords:
            if kw.arg == "device" and str_value(model, kw.value, ctx) != "cpu":
                return True
    for name in func.names:
        bindings = model.lookup(name, Ctx(func.scope, func, (), ()), None)
        if bindings and any(kind == "import" and (target == "torch_xla" or target.startswith("torch_xla."))
                            for _, kind, target, _ in bindings):
            return True
    return False

"""XLA0: launching processes."""

from __future__ import annotations

import ast

from ..model import UNKNOWN, Ctx
from ..registry import Rule, rule
from ._common import at_least, device_leaves, launch_call, source_text, str_value


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
    crashes on 2.6+ as soon as the flag is not 1. The message shows the expression as
    written (cut after 30 characters), the number a constant holds (`nprocs=NUM_CORES (= 8)`),
    and, when the value cannot be seen, what happens unless it is None or 1.

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
    - torch_xla `torch_xla/_internal/pjrt.py` `spawn()` (ValueError since 2.6, #7971; warning
      "Unsupported nprocs (%d), ignoring..." 2.1-2.5, in `torch_xla/experimental/pjrt.py` in 2.0)
    - torch_xla `README.md` "Multi processing" diff; `docs/source/learn/pytorch-on-xla-devices.md`
    - Applies to torch_xla 2.0-2.9 (PJRT); under XRT (<= 2.0) nprocs was meaningful.
    """

    code = "XLA001"
    name = "spawn-hardcoded-nprocs"
    message = "xmp.spawn() given a process count"
    fix = "drop nprocs: the runtime starts one process per device"
    severity = "E"
    versions = "2.0+ (ValueError from 2.6)"
    fix_applicability = "safe"
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
            if values is not None and all(_accepted(v) for v in values):
                continue  # nprocs=1 if debug else None, NPROCS = 1, ...
            yield self.finding(nprocs, _nprocs_problem(self.settings, nprocs, values), self._fix())

    def _fix(self):
        fix = self.fix
        if at_least(self.settings, "2.5"):
            fix += f"; or use {launch_call(self.settings)}"
        return fix


def _accepted(value) -> bool:
    """What PJRT's ``spawn`` takes without complaint: ``None`` or 1."""
    return value is None or (value == 1 and value is not True)


def _nprocs_problem(settings, nprocs, values) -> str:
    """``xmp.spawn() given nprocs=...: <what happens>``, in the target version's terms.

    A literal count is certain; a value that cannot be seen (``args.num_cores``,
    ``POD_CORES // HOST_CORES``), or may also be None/1, says what happens when it is not.
    """
    shown = source_text(nprocs)
    if type(nprocs) is not ast.Constant and values is not None and len(set(map(repr, values))) == 1:
        shown += f" (= {values[0]!r})"  # NUM_CORES = 8: show the number the name holds
    certain = values is not None and not any(_accepted(v) for v in values)
    if at_least(settings, "2.6"):
        what = "raises ValueError on torch_xla >= 2.6 " + (
            "(only None or 1 are accepted)" if certain else "unless it is None or 1")
    else:
        what = ("PJRT ignores it with a warning (torch_xla 2.0-2.5) and 2.6+ raises ValueError" if certain
                else "unless it is None or 1, ignored with a warning on 2.0-2.5, ValueError on 2.6+")
    return f"xmp.spawn() given nprocs={shown}: {what}"


@rule
class TorchMpSpawnWithXla(Rule):
    """## What it does
    Flags `torch.multiprocessing.spawn(...)` / `start_processes(...)` (any alias) in XLA
    code when the target does XLA work, or cannot be seen. XLA work is a torch_xla name, a
    move or a tensor placed on a device that is not visibly the CPU (`.to(device)`,
    `device=...`, `.cuda()`), a collective or DDP, or training (`.backward()`, `torch.optim`).

    ## Why is this bad?
    The XLA launcher gives each process its device, its ordinal and the runtime topology
    (`PJRT_LOCAL_PROCESS_RANK`, TPU process bounds, ...). Processes started by plain
    `torch.multiprocessing` get none of it, so they race for the same chips or see the
    wrong world.

    ## Known problems
    A target that only does CPU work is not reported: a pre-processing pool running
    `torch.nn` / `torch.nn.functional` (`pad_sequence`, `F.pad`), `torch.save` or
    `.to("cpu")` / `.to(torch.long)` computes on the CPU, where its tensors live. A target
    defined in another module is reported, since it cannot be seen; one that hands its work
    to a function imported from another module is not (what that function does is unknown).

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
    - torch_xla `torch_xla/_internal/pjrt.py` `run_multiprocess` (2.1-2.9;
      `torch_xla/experimental/pjrt.py` in 2.0): sets `PJRT_LOCAL_PROCESS_RANK` /
      `PJRT_LOCAL_PROCESS_COUNT` and the TPU topology for each process it starts
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA002"
    name = "torch-mp-spawn-with-xla"
    message = "torch.multiprocessing starts XLA workers without the XLA runtime's per-process set-up"
    fix = "use torch_xla.launch(fn, args=...) (torch_xla >= 2.5) or xmp.spawn(fn, args=...)"
    severity = "E"
    versions = "2.0+"
    fix_applicability = "unsafe"
    bad = [
        "import torch\nimport torch.multiprocessing as mp\nimport torch_xla\n"
        "def train(rank):\n    torch.ones(2, device=torch_xla.device())\n"
        "mp.spawn(train, nprocs=4)\n",
    ]
    good = [
        "import torch.multiprocessing as mp\nimport torch_xla\n"
        "def prep(path):\n    return path.upper()\n"
        "mp.spawn(prep, nprocs=2)\n",
        "import torch\nimport torch.multiprocessing as mp\nimport torch.nn.functional as F\nimport torch_xla\n"
        "from torch.nn.utils.rnn import pad_sequence\n"
        "def shard(i, seqs):\n    batch = F.pad(pad_sequence(seqs, batch_first=True), (0, 1))\n"
        "    torch.save(batch, f'/tmp/shard{i}.pt')\n"
        "mp.spawn(shard, args=([],), nprocs=4)\n",
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


#: torch namespaces whose calls mean the worker trains or joins a process group (XLA work in an
#: XLA script): collectives, optimizers, autograd, CUDA, device objects and DDP
DEVICE_WORK = ("torch.distributed", "torch.optim", "torch.cuda", "torch.autograd", "torch.device",
               "torch.nn.parallel")
#: dtypes: ``x.to(torch.long)`` converts on the CPU, it moves nothing
DTYPES = frozenset(
    "float float16 float32 float64 bfloat16 half double cfloat cdouble complex64 complex128 "
    "int int8 int16 int32 int64 long short uint8 bool".split())


def _does_device_work(model, func) -> bool:
    """Does the function touch a device: torch_xla, optimizers, collectives, DDP,
    ``.backward()``, ``.cuda()``, ``.to(<device>)`` or ``device=<device>`` where the device
    is not visibly the CPU? Device-agnostic compute is not: ``torch.nn`` modules and
    ``torch.nn.functional`` (``F.pad``, ``pad_sequence``), ``torch.cat``, ``torch.save``,
    ``torch.load(..., map_location="cpu")``, ``.to("cpu")``, ``.to(torch.long)``: it runs
    where its tensors live, and a worker that never places a tensor keeps them on the CPU."""
    for call, ctx in func.calls:
        q = model.call_name(call, ctx)
        if q is not None and (q == "torch_xla" or q.startswith("torch_xla.") or q in DEVICE_WORK
                              or q.startswith(tuple(p + "." for p in DEVICE_WORK))):
            return True
        if q is None and type(call.func) is ast.Attribute:
            attr = call.func.attr
            if attr in ("backward", "cuda"):
                return True
            if attr == "to":
                targets = [a for a in call.args if not _is_dtype(model, a, ctx)]
                targets += [kw.value for kw in call.keywords if kw.arg in ("device", None)]
                if any(not _is_cpu(model, t, ctx) for t in targets):
                    return True
        for kw in call.keywords:
            if kw.arg == "device" and not _is_cpu(model, kw.value, ctx):
                return True
    for name in func.names:
        bindings = model.lookup(name, Ctx(func.scope, func, (), ()), None)
        if bindings and any(kind == "import" and (target == "torch_xla" or target.startswith("torch_xla."))
                            for _, kind, target, _ in bindings):
            return True
    return False


def _is_dtype(model, expr, ctx) -> bool:
    q = model.qualname(expr, ctx)
    return q is not None and q.startswith("torch.") and q[len("torch."):] in DTYPES


def _is_cpu(model, expr, ctx) -> bool:
    """``"cpu"``, ``torch.device("cpu")``, or a name every assignment of which is one."""
    leaves = device_leaves(model, expr, ctx)
    if not leaves:
        return False
    for e, c in leaves:
        if type(e) is ast.Call and model.call_name(e, c) == "torch.device":
            e = model.kwarg(e, "type", 0)
        text = str_value(model, e, c)
        if text is None or not (text == "cpu" or text.startswith("cpu:")):
            return False
    return True

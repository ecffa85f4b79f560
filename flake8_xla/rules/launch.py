"""XLA0: launching processes."""

from __future__ import annotations

import ast

from ..model.scopes import _is_main_guard, param_default

from ..model import UNKNOWN, Ctx
from ..model.runtime import device_leaves, is_xla_device, str_value
from ..registry import Rule, rule
from ._common import at_least, launch_call, short_name, source_text


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
    crashes on 2.6+ as soon as the flag is not 1. In project mode a launch wrapper's own
    parameter with a `None` (or 1) default (`def spawn(fn, nprocs=None)`) is not reported when
    no call of the wrapper passes one (every caller seen, in every module). The message shows the expression as
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
    fix = "drop nprocs"
    severity = "E"
    versions = "2.0+ (ValueError from 2.6)"
    reported_at = 'the `xmp.spawn(...)` call'
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
            if _default_everywhere(model, nprocs, ctx):
                continue  # def spawn(fn, nprocs=None): no caller passes one
            yield self.finding(call, _nprocs_problem(self.settings, nprocs, values))


def _default_everywhere(model, nprocs, ctx) -> bool:
    """``nprocs`` is a parameter of the enclosing function whose default is ``None`` or 1
    (``def spawn(fn, args=(), nprocs=None)``), and every call of that function seen passes
    nothing for it or a literal ``None`` / 1: in the module and every other module's call
    (project mode only: known callers; a splat or a reference that hands it on is unknown)."""
    func = ctx.func
    if type(nprocs) is not ast.Name or func is None:
        return False
    bindings = model.lookup(nprocs.id, ctx, None)
    if not bindings or any(kind != "param" for _, kind, _, _ in bindings):
        return False
    a = func.node.args
    index = next((i for i, p in enumerate(a.posonlyargs + a.args) if p.arg == nprocs.id), None)
    default = param_default(a, nprocs.id)
    if type(default) is not ast.Constant or not _accepted(default.value):
        return False
    for call, cctx in model.calls_of(func):
        arg = model.argument_for(call, cctx, func, nprocs.id)
        if arg is UNKNOWN or (arg is not None and not (type(arg) is ast.Constant and _accepted(arg.value))):
            return False
    if model.project_lookup is None:
        return False  # (single-file mode: other modules' calls cannot be seen)
    qual = model.function_quals().get(id(func))
    calls = model.project_callers(qual) if qual else None
    if calls is None:
        return False
    if func.cls is not None and index is not None:
        index -= 1  # (a method's callers pass no self)
    return not any(c.escape or c.splat or c.argument(index, nprocs.id) is not None for c in calls)


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
    # the fixer (flake8_xla/fix/rules.py, XLA001) reads "raises ValueError" / "ignored, ValueError"
    # as "every value is visible and none is None or 1"
    if at_least(settings, "2.6"):
        what = "raises ValueError" if certain else "ValueError unless None or 1"
    else:
        what = "ignored, ValueError from 2.6" if certain else "ignored unless None or 1, ValueError from 2.6"
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
    defined in another module is reported, since it cannot be seen, but in project mode
    not when that module's function (and what it calls) names no torch_xla and trains
    nothing; one that hands its work to a function imported from another module is not
    (what that function does is unknown).
    Nor are workers forced onto the CPU, with no chip to race for: `PJRT_DEVICE` set to
    `"CPU"` unconditionally in the launched code, or before the launch in the launching block
    or at module level, or `use_cpu=True` (`TrainingArguments(use_cpu=True)`, on the launch)
    / `Accelerator(cpu=True)` in the launched code. A CPU setting under a condition
    (`if args.cpu:`) or after the launch leaves the workers on the TPU: still reported.

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
    message = "torch.multiprocessing skips the XLA runtime's per-process set-up"
    fix = "use torch_xla.launch(fn, args=...)"
    severity = "E"
    versions = "2.0+"
    reported_at = 'the `torch.multiprocessing.spawn(...)` / `start_processes(...)` call'
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
        fix = f"use {launch_call(self.settings)}"
        for call, ctx, targets, _ in model.launches():
            q = model.call_name(call, ctx)
            if q not in model.TORCH_LAUNCHERS:
                continue
            funcs = _funcs(model, targets) if targets else []
            if targets and not any(_does_device_work(model, f) for f in funcs):
                continue
            if not targets and _project_host_work(model, call, ctx):
                continue  # mp.spawn(prep.encode_shard, ...): another module's CPU-only function
            if targets and _forced_cpu(model, call, ctx, funcs):
                continue  # PJRT_DEVICE=CPU / use_cpu=True set for the workers: no chip to race for
            yield self.finding(call, fix=fix)


def _project_host_work(model, call, ctx) -> bool:
    """Project mode: the spawned function is another project module's, and neither it nor
    what it calls names torch_xla or trains (:class:`~flake8_xla.project.HelperFacts`:
    ``xla_calls``, ``steps``): CPU work such as preprocessing shards. False when unknown."""
    target = model.kwarg(call, "fn", 0)
    if model.project_lookup is None or type(target) not in (ast.Name, ast.Attribute):
        return False
    parts = model._import_chain(target, ctx)
    if parts is None:
        return False
    try:
        h = model.project_lookup(parts)
    except (Exception, RecursionError):  # the project cannot be read: unknown
        return False
    return h is not None and not h.xla_calls and not h.steps


def _forced_cpu(model, launch, launch_ctx, funcs) -> bool:
    """Are the launched workers forced onto the CPU: ``PJRT_DEVICE`` set to ``"CPU"``
    unconditionally in the launched code or in the launching block before the launch (or
    at module level before it), or ``use_cpu=True`` on the launch or an unconditional call
    of the launched code (``TrainingArguments(use_cpu=True)``, ``Accelerator(cpu=True)``)?"""
    ids = {id(f) for f in funcs}
    for key, node, value, ctx in model.env_writes():
        if key != "PJRT_DEVICE" or value is None:
            continue
        text = str_value(model, value, ctx)
        if text is None or text.upper() != "CPU":
            continue
        if ctx.func is not None and id(ctx.func) in ids and not ctx.frames:
            return True
        if ctx.func is launch_ctx.func and (not ctx.frames or ctx.frames is launch_ctx.frames) \
                and node.lineno < launch.lineno:
            return True
        if ctx.func is None and not ctx.frames and (launch_ctx.func is not None or node.lineno < launch.lineno):
            return True
    if _true_keyword(launch, ("use_cpu",)):
        return True
    for f in funcs:
        for call, ctx in f.calls:
            if not ctx.frames and (_true_keyword(call, ("use_cpu",)) or (
                    _true_keyword(call, ("cpu",)) and model.call_name(call, ctx) == "accelerate.Accelerator")):
                return True
    return False


def _true_keyword(call, names) -> bool:
    return any(kw.arg in names and type(kw.value) is ast.Constant and kw.value.value is True for kw in call.keywords)


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


#: torch_xla calls that start the XLA runtime (create the PJRT client) in the calling process
RUNTIME_CALLS = frozenset({
    "torch_xla.device", "torch_xla.devices", "torch_xla.real_devices", "torch_xla.device_count",
    "torch_xla.sync", "torch_xla.manual_seed",
    "torch_xla.core.xla_model.xla_device", "torch_xla.core.xla_model.get_xla_supported_devices",
    "torch_xla.core.xla_model.xla_real_devices", "torch_xla.core.xla_model.xla_device_hw",
    "torch_xla.core.xla_model.xla_device_kind", "torch_xla.core.xla_model.xla_replication_devices",
    "torch_xla.core.xla_model.get_local_ordinal", "torch_xla.core.xla_model.get_ordinal",
    "torch_xla.core.xla_model.is_master_ordinal", "torch_xla.core.xla_model.master_print",
    "torch_xla.core.xla_model.xrt_world_size", "torch_xla.core.xla_model.mark_step",
    "torch_xla.core.xla_model.wait_device_ops", "torch_xla.core.xla_model.set_rng_state",
    "torch_xla.core.xla_model.get_rng_state", "torch_xla.core.xla_model.get_memory_info",
    "torch_xla.core.xla_model.rendezvous",
    "torch_xla.runtime.world_size", "torch_xla.runtime.global_ordinal", "torch_xla.runtime.local_ordinal",
    "torch_xla.runtime.global_device_count", "torch_xla.runtime.local_device_count",
    "torch_xla.runtime.addressable_device_count", "torch_xla.runtime.process_index",
    "torch_xla.runtime.process_count", "torch_xla.runtime.global_runtime_device_count",
    "torch_xla.runtime.addressable_runtime_device_count", "torch_xla.runtime.runtime_device_attributes",
    "torch_xla.runtime.global_runtime_device_attributes", "torch_xla.runtime.is_bf16_supported",
    "torch_xla.runtime.xla_device",
})

_LAUNCHER_NAMES = {
    "torch_xla.distributed.xla_multiprocessing.spawn": "xmp.spawn()",
    "torch_xla.launch": "torch_xla.launch()",
    "torch.multiprocessing.spawn": "torch.multiprocessing.spawn()",
    "torch.multiprocessing.start_processes": "torch.multiprocessing.start_processes()",
}


#: tensor and module methods whose ``device=`` puts the result on that device
_DEVICE_METHODS = frozenset({"to", "to_empty", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})


def _device_keyword_places(model, call, ctx, depth: int = 0) -> bool:
    """The call's ``device=`` puts something on that device: a torch call (a tensor factory
    ``torch.zeros(..., device=d)``, a module ``torch.nn.Linear(..., device=d)``), a tensor or
    module method (``x.new_zeros(..., device=d)``, ``m.to_empty(device=d)``), or a module
    function or class whose ``device`` parameter places a tensor or module in turn
    (``build(device=d)`` running ``torch.zeros(n, device=device)``). Not a config object, a
    ``dict``, a ``SimpleNamespace``, ``argparse``'s ``set_defaults`` or ``functools.partial``:
    they hold the string and start nothing."""
    f = call.func
    if type(f) is ast.Attribute and f.attr in _DEVICE_METHODS:
        return True
    q = model.call_name(call, ctx)
    if q is not None and q.split(".", 1)[0] in ("torch", "torch_xla"):
        return True
    if depth >= 2:
        return False
    for func in _callees(model, call, ctx):
        args = func.node.args
        if all(a.arg != "device" for a in args.posonlyargs + args.args + args.kwonlyargs):
            continue
        for c, x in func.calls:
            devices = [kw.value for kw in c.keywords if kw.arg == "device"]
            if devices and not _device_keyword_places(model, c, x, depth + 1):
                devices = []
            if type(c.func) is ast.Attribute and c.func.attr == "to":
                devices += [a for a in c.args[:1] if type(a) is not ast.Starred]
            if any(type(d) is ast.Name and d.id == "device" for d in devices):
                return True
    return False


def _places_on_xla(model, call, ctx) -> bool:
    """``.to(<xla device>)`` or ``device=<xla device>`` of a call that places what it makes
    (:func:`_device_keyword_places`): an XLA tensor, so a started runtime."""
    f = call.func
    devices = [kw.value for kw in call.keywords if kw.arg == "device"]
    if devices and not _device_keyword_places(model, call, ctx):
        devices = []
    if type(f) is ast.Attribute and f.attr == "to":
        devices += [a for a in call.args[:1] if type(a) is not ast.Starred]
    for d in devices:
        leaves = device_leaves(model, d, ctx)
        if leaves and any(is_xla_device(model, e, c) for e, c in leaves):
            return True
    return False


def _callees(model, call, ctx) -> list:
    """The module functions a call runs: what it names, or ``Cls.__init__`` for ``Cls(...)``."""
    funcs = model.function_of(call.func, ctx)
    if not funcs and type(call.func) is ast.Name:
        cls = model.class_named(call.func.id, ctx)
        if cls is not None:
            funcs = model._mro_methods(cls, "__init__")
    return funcs


def _touches(model, call, ctx) -> bool:
    return model.call_name(call, ctx) in RUNTIME_CALLS or _places_on_xla(model, call, ctx)


def _runtime_helpers(model) -> dict:
    """``id(function) -> True`` for the module functions that touch the runtime, directly or
    through the module functions they call; built when first asked (memoised)."""
    table = model._cache.get("runtime_touch")
    if table is not None:
        return table
    direct = {id(f): any(_touches(model, c, x) for c, x in f.calls if model.in_xla_code(x))
              for f in model.functions}
    return model.closure_over_callers("runtime_touch", direct)


@rule
class RuntimeUsedBeforeSpawn(Rule):
    """## What it does
    Flags each statement that starts the XLA runtime in the launching process before a
    multi-process launch (`xmp.spawn`, `torch_xla.launch`, in XLA code also
    `torch.multiprocessing.spawn`): at module level, in the `__main__` block, or in the
    function that calls the launcher (and its callers) before the call. Starting the runtime
    means getting a device (`torch_xla.device()`, `xm.xla_device()`), asking for the world
    size or an ordinal (`xr.world_size()`, `xm.is_master_ordinal()`, `xm.master_print`),
    listing devices, syncing, seeding the device, or placing a tensor on an XLA device
    (`.to("xla")`), directly or in a module helper. In project mode also a module-level
    runtime call (`DEVICE = torch_xla.device()`) in a module that a multi-process launching
    script imports at module level (directly or through up to three modules imported at
    module level): it runs in the launching process when the script starts.

    ## Why is this bad?
    The launcher gives each process its own chips and topology; the parent must not hold
    the devices. From torch_xla 2.3 `xmp.spawn` raises `RuntimeError: Runtime is already
    initialized. Do not use the XLA device before calling xmp.spawn.`; before that the
    processes failed in confusing ways (`Cannot replicate if number of devices (1) is
    different from 8`).

    ## Known problems
    Not reported: environment configuration (`os.environ["PJRT_DEVICE"] = "TPU"`,
    `xr.set_device_type`), `torch.device("xla")` that places nothing, a `device="xla"`
    keyword of a call that only keeps the string (a config class, `dict`, `SimpleNamespace`,
    `parser.set_defaults`, `functools.partial`), `xmp.MpModelWrapper` around a CPU model, single-process launches (`nprocs=1`, `debug_single_process=True`),
    calls on the other branch of an `if` than the launch (`if flags.num_cores == 1:
    _mp_fn(0) else: xmp.spawn(_mp_fn)`), helpers imported from other modules in
    single-file mode (what they do cannot be seen), and in project mode an imported
    module's runtime calls under its own `if __name__ == "__main__":` or imported only
    inside the launched function.

    ## Example
    ```python
    if __name__ == "__main__":
        device = xm.xla_device()
        xmp.spawn(_mp_fn, args=(device,))
    ```

    ## Use instead
    ```python
    def _mp_fn(index):
        device = torch_xla.device()
        ...

    if __name__ == "__main__":
        torch_xla.launch(_mp_fn)
    ```

    ## References
    - torch_xla `torch_xla/_internal/pjrt.py` `run_multiprocess` (the RuntimeError, #6291, 2.3+)
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md`: devices may be retrieved "only
      from within the target function of `torch_xla.launch()`"
    - pytorch/xla issues #1587, #2141, #7765, #8986
    - Applies to torch_xla 2.0-2.9 (a clear error from 2.3).
    """

    code = "XLA003"
    reported_at = "each statement that touches the runtime before the launch (for a call, the statement's first line)"
    name = "runtime-used-before-spawn"
    message = "the XLA runtime is started before the launch"
    fix = "move it into the launched function"
    severity = "E"
    versions = "2.0+ (RuntimeError from 2.3)"
    bad = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.xla_multiprocessing as xmp\n"
        "def _mp_fn(index, device):\n    pass\n"
        "if __name__ == '__main__':\n"
        "    device = xm.xla_device()\n"
        "    xmp.spawn(_mp_fn, args=(device,))\n",
    ]
    good = [
        "import os\nimport torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n"
        "def _mp_fn(index):\n    device = torch_xla.device()\n"
        "if __name__ == '__main__':\n"
        "    os.environ['PJRT_DEVICE'] = 'TPU'\n"
        "    xmp.spawn(_mp_fn)\n",
        "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def _mp_fn(index):\n    pass\n"
        "device = xm.xla_device()\n"
        "torch_xla.launch(_mp_fn, debug_single_process=True)\n",
    ]

    def check(self, model):
        yield from self._at_import(model)
        before = model.calls_before_launch()
        if not before:
            return
        done: set[int] = set()
        for call, ctx, stmt, launch in before:
            if id(stmt) in done or not model.in_xla_code(ctx):
                continue
            q = model.call_name(call, ctx)
            if q in RUNTIME_CALLS:
                what = f"{short_name(q)}()"
            elif _places_on_xla(model, call, ctx):
                what = "a tensor on XLA"
            elif q is None and any(_runtime_helpers(model).get(id(f)) for f in _callees(model, call, ctx)):
                what = f"{_callees(model, call, ctx)[0].name}()"
                if what == "__init__()":
                    what = f"{call.func.id}()"  # Runner(): its __init__ asks the runtime
            else:
                helper = model.project_helper(call.func, ctx)  # project mode: another module's helper
                if helper is None or not helper.runs & RUNTIME_CALLS:
                    continue
                what = f"{helper.qual}() of {helper.module[-40:]}"
            done.add(id(stmt))
            q = model.call_name(launch, model.call_ctx(launch)) or ""
            yield self.finding(stmt, f"{what} starts the XLA runtime before {_LAUNCHER_NAMES.get(q, 'the launch')}")


    def _at_import(self, model):
        """Project mode: the module launches nothing itself, and a launching module imports
        it at module level (``imported_before_launch``): its module-level runtime calls
        (outside ``if __name__ == "__main__":``) run in the launching process at that import,
        before the launch (``DEVICE = torch_xla.device()`` in ``fsdp_utils.py``)."""
        probe = model.project_import_probe
        if probe is None or not model.uses_torch_xla or model.launches():
            return
        found = []
        for call, ctx in model.calls:
            if ctx.func is not None or not model.in_xla_code(ctx) or _under_main_guard(ctx) or _deferred(ctx):
                continue
            q = model.call_name(call, ctx)
            if q in RUNTIME_CALLS:
                found.append((call, ctx, f"{short_name(q)}()"))
        if not found:
            return
        launcher = probe()
        if launcher is None:
            return
        launcher = launcher.rsplit("/", 1)[-1]
        done: set[int] = set()  # (one finding per line)
        for call, ctx, what in found:
            if call.lineno in done:
                continue
            done.add(call.lineno)
            yield self.finding(call, f"{what} starts the XLA runtime at import by {launcher}, before its launch")


def _deferred(ctx) -> bool:
    """Module-level code at ``ctx`` that does not run when the module runs: the body of a
    ``lambda``, the element of a generator expression (``atexit.register(lambda: ...)``,
    ``DEVICES = (torch_xla.device() for _ in ...)``)."""
    scope = ctx.scope
    while scope is not None and scope.kind != "module":
        if scope.kind == "lambda" or (scope.kind == "comprehension" and type(scope.node) is ast.GeneratorExp):
            return True
        scope = scope.parent
    return False


def _under_main_guard(ctx) -> bool:
    """Code at ``ctx`` is under ``if __name__ == "__main__":`` (either branch)."""
    node = ctx.frames or None
    while node is not None:
        frame = node.frame
        if type(frame) is tuple and len(frame) == 2 and isinstance(frame[0], ast.AST) and _is_main_guard(frame[0]):
            return True
        node = node.parent
    return False


@rule
class LaunchWithSpmd(Rule):
    """## What it does
    Flags `xmp.spawn(...)` / `torch_xla.launch(...)` when SPMD mode is turned on
    (`xr.use_spmd()`, or `XLA_USE_SPMD` set in the environment) before it in the launching
    process (directly or in a module function called on the way), or in the code it
    launches. Reported at the launch call.

    ## Why is this bad?
    SPMD runs one process per host that drives all of the host's devices; the tensors are
    sharded by annotations, not by processes. `torch_xla.launch` raises
    `NotImplementedError: launch function does not support SPMD at this time` (2.5+), even
    with `debug_single_process=True`; `xmp.spawn` starts one process per device, each of
    which then tries to run the whole SPMD program.

    ## Known problems
    Not reported: `xmp.spawn(..., nprocs=1)` (runs the function in the calling process),
    an SPMD switch on the other branch of an `if` than the launch (`if args.spmd:` /
    `else:`), after the launch, or in a function nothing on the way to the launch calls,
    `XLA_USE_SPMD` set for a subprocess or to `"0"`, and launches by
    `torch.multiprocessing` (XLA002).

    ## Example
    ```python
    xr.use_spmd()
    torch_xla.launch(train)
    ```

    ## Use instead
    ```python
    xr.use_spmd()
    train()   # one process per host; shard the batch with MpDeviceLoader(..., input_sharding=...)
    ```

    ## References
    - torch_xla `torch_xla/torch_xla.py` `launch` (`NotImplementedError`, #7648, 2.5)
    - torch_xla `README.md` and `docs/source/perf/spmd_basic.md` (SPMD is not compatible
      with multi-processing); `examples/data_parallel/train_resnet_spmd_data_parallel.py`
    - Applies to torch_xla 2.1-2.9 (`xr.use_spmd()` since 2.1).
    """

    code = "XLA004"
    reported_at = 'the launch call (`xmp.spawn(...)` / `torch_xla.launch(...)`)'
    name = "launch-with-spmd"
    message = "multi-process launch under SPMD (one process per host)"
    fix = "call the function directly"
    severity = "E"
    versions = "2.1+ (NotImplementedError from torch_xla.launch since 2.5)"
    supersedes = ("XLA001", "XLA003")
    bad = [
        "import torch_xla\nimport torch_xla.runtime as xr\n"
        "def train(index):\n    pass\n"
        "xr.use_spmd()\n"
        "torch_xla.launch(train)\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.runtime as xr\n"
        "def train():\n    pass\n"
        "xr.use_spmd()\n"
        "train()\n",
        "import torch_xla\nimport torch_xla.runtime as xr\nimport torch_xla.distributed.xla_multiprocessing as xmp\n"
        "def train(index=0):\n    pass\n"
        "def main(spmd):\n"
        "    if spmd:\n        xr.use_spmd()\n        train()\n"
        "    else:\n        xmp.spawn(train)\n",
    ]

    def check(self, model):
        switches = model.spmd_switches()
        if not switches:
            return
        for call, ctx, targets, single in model.launches():
            q = model.call_name(call, ctx)
            if q not in model.XLA_LAUNCHERS or not model.in_xla_code(ctx):
                continue
            if single and q != "torch_xla.launch":
                continue  # xmp.spawn(nprocs=1) calls the function in this process
            launched = model.reachable(targets)
            if not any((sctx.func is not None and id(sctx.func) in launched)
                       or model.runs_before_launch(node, sctx, call, ctx) for node, sctx in switches):
                continue  # SPMD switched on after the launch, or where the launch never runs
            if q == "torch_xla.launch" and at_least(self.settings, "2.5"):
                message = "torch_xla.launch() raises NotImplementedError under SPMD"
            else:
                message = f"{_LAUNCHER_NAMES[q]} under SPMD (one process per host)"
            yield self.finding(call, message)


#: collectives that need every replica: in the launching process, after the launch returned,
#: they run alone (the replicas are gone) or fail (no process group there)
PARENT_COLLECTIVES = frozenset({
    "torch_xla.core.xla_model.rendezvous", "torch_xla.core.xla_model.xla_rendezvous",
    "torch_xla.core.xla_model.mesh_reduce", "torch_xla.core.xla_model.all_reduce",
    "torch_xla.core.xla_model.all_gather", "torch_xla.core.xla_model.reduce_scatter",
    "torch_xla.core.xla_model.all_to_all", "torch_xla.core.xla_model.collective_permute",
    "torch_xla.core.xla_model.reduce_gradients",
    "torch.distributed.barrier", "torch.distributed.monitored_barrier", "torch.distributed.all_reduce",
    "torch.distributed.all_gather", "torch.distributed.all_gather_object", "torch.distributed.broadcast",
    "torch.distributed.broadcast_object_list", "torch.distributed.reduce", "torch.distributed.gather",
    "torch.distributed.scatter", "torch.distributed.reduce_scatter", "torch.distributed.all_to_all",
})


def _collective_helpers(model) -> dict:
    """``id(function) -> True`` for the module functions that are not launched code, launch
    nothing themselves (a driver's own collectives are judged where they stand: after a
    single-process launch its process is the replica) and call a collective in XLA code,
    directly or through the module functions they call (memoised)."""
    table = model._cache.get("collective_helpers")
    if table is not None:
        return table
    launched = model.launched()
    drivers = _drivers(model)
    direct = {id(f): id(f) not in launched and id(f) not in drivers
              and any(model.call_name(c, x) in PARENT_COLLECTIVES for c, x in f.calls if model.in_xla_code(x))
              for f in model.functions}
    table = dict(model.closure_over_callers("collective_helpers", direct))
    for k in drivers:  # a driver's calls are judged inside it (no second finding at its call)
        table[k] = False
    model._cache["collective_helpers"] = table
    return table


def _drivers(model) -> set[int]:
    """ids of the module functions that call a launcher."""
    return {id(ctx.func) for _, ctx, _, _ in model.launches() if ctx.func is not None}


@rule
class CollectiveInLaunchingProcess(Rule):
    """## What it does
    Flags a collective (`xm.rendezvous`, `xm.mesh_reduce`, `xm.all_reduce`, `xm.all_gather`,
    `dist.barrier()`, `dist.all_reduce`, ...) that runs in the launching process after a
    multi-process launch (`xmp.spawn`, `torch_xla.launch`, in XLA code also
    `torch.multiprocessing.spawn`) returned: at module level, in the `__main__` block, or in
    the function that launched (and its callers) after the launch; directly or in a module
    helper called there. The mirror of XLA003.

    ## Why is this bad?
    The launching process is not a replica: when the launch returns, the replicas have
    exited. A collective there meets nobody. `xm.rendezvous` returns only the parent's own
    payload, `xm.mesh_reduce` "reduces" only the parent's value (an accuracy or a loss the
    replicas computed is not in it), and both start the XLA runtime in the parent, which
    then holds the host's devices; `dist.barrier()` raises `ValueError: Default process group
    has not been initialized` (the process group lived in the replicas). Measured on
    torch_xla 2.9 (CPU, one replica): after `torch_xla.launch(fn)` the parent's
    `xm.rendezvous("done")` returned `[b'']`, `xm.mesh_reduce("acc", 3.0, sum)` returned
    `3.0`, `xm.all_reduce` of a parent tensor returned it unchanged, `dist.barrier()`
    raised that ValueError.

    ## Known problems
    Not reported: single-process launches (`xmp.spawn(..., nprocs=1)`,
    `torch_xla.launch(..., debug_single_process=True)` run the function in the calling
    process, which then is the replica), calls inside the launched function, calls on the
    other branch of an `if` than the launch (`if n == 1: _mp_fn(0); xm.rendezvous("x")
    else: xmp.spawn(_mp_fn)`), and helpers imported from other modules.

    ## Example
    ```python
    if __name__ == "__main__":
        torch_xla.launch(_mp_fn, args=(flags,))
        xm.rendezvous("training_done")
    ```

    ## Use instead
    ```python
    def _mp_fn(index, flags):
        train(flags)
        xm.rendezvous("training_done")   # every replica meets here

    if __name__ == "__main__":
        torch_xla.launch(_mp_fn, args=(flags,))
    ```

    ## References
    - pytorch/xla#2651 (`xm.rendezvous('done')` after `xmp.spawn` in the `main()` of
      transformers' `xla_spawn.py`: "Failed to connect to client mesh master" on 1.7; the
      maintainer: "Rendezvous cannot come after spawned process"); pytorch/xla#2613 (a
      value wanted in the parent: reduce it with `xm.mesh_reduce` inside the function)
    - torch_xla `torch_xla/core/xla_model.py` `rendezvous` -> `xla_rendezvous` (an
      `all_gather` over the replicas of the calling process's runtime, 2.1-2.9),
      `mesh_reduce` (a rendezvous of the pickled data)
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` (devices and collectives belong
      to the function `torch_xla.launch` runs)
    - Applies to torch_xla 2.0-2.9; verified on 2.9 (CPU), as above.
    """

    code = "XLA005"
    name = "collective-in-launching-process"
    message = "collective after the launch runs in the launching process"
    fix = "move it into the launched function"
    severity = "E"
    versions = "2.0+"
    reported_at = "the collective call (or the call of the module helper that runs one)"
    bad = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def _mp_fn(index):\n    pass\n"
        "if __name__ == '__main__':\n"
        "    torch_xla.launch(_mp_fn)\n"
        "    xm.rendezvous('done')\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def _mp_fn(index):\n    xm.rendezvous('done')\n"
        "if __name__ == '__main__':\n"
        "    torch_xla.launch(_mp_fn)\n",
        "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def _mp_fn(index):\n    pass\n"
        "torch_xla.launch(_mp_fn, debug_single_process=True)\n"
        "xm.rendezvous('done')\n",
    ]

    def check(self, model):
        after = model.calls_after_launch()
        if not after:
            return
        for call, ctx, launch in after:
            if not model.in_xla_code(ctx):
                continue
            q = model.call_name(call, ctx)
            lq = model.call_name(launch, model.call_ctx(launch)) or ""
            launcher = _LAUNCHER_NAMES.get(lq, "the launch")
            if q in PARENT_COLLECTIVES:
                what = short_name(q).replace("torch.distributed.", "dist.")
                problem = f"{what}() after {launcher} returned runs in the launching process: no replica meets it"
            elif q is None and any(_collective_helpers(model).get(id(f)) for f in _callees(model, call, ctx)):
                what = _callees(model, call, ctx)[0].name
                if what == "__init__":
                    what = getattr(call.func, "id", "it")
                problem = f"{what}() runs a collective in the launching process after {launcher} returned"
            else:
                continue
            yield self.finding(call, problem)

"""XLA9: runtime odds and ends (the compilation cache, SPMD counts, weight ties, tensor
internals, sharding annotations)."""

from __future__ import annotations

import ast
import bisect
import re

from .. import api_table
from ..model import UNKNOWN
from ..model.replicas import is_rank_value
from ..model.runtime import _PARAM_NAMES, SPMD_PACKAGES, dotted, frames_within
from ..model.tensors import TORCH_FACTORIES
from ..registry import Rule, rule
from ._common import at_least, device_call, short_name

INITIALIZE_CACHE = "torch_xla.runtime.initialize_cache"


def _available(settings, module: str, name: str) -> bool:
    """The target release defines ``module.name`` (the generated names table)."""
    versions = api_table.name_versions(module, name)
    return versions is not None and settings.version_text in versions


def _rank_tested(model, ctx) -> bool:
    """Code under an ``if`` that tests a rank (``if xr.global_ordinal() == 0:``): only some
    processes run it."""
    for frame in ctx.frames:
        if type(frame) is not tuple:
            continue
        for node in ast.walk(frame[0]):
            if type(node) in (ast.Name, ast.Attribute, ast.Call) and is_rank_value(model, node, ctx):
                return True
    return False


def _cache_probe(ctx) -> bool:
    """Under ``if not torch_xla._XLAC._xla_computation_cache_is_initialized():``."""
    for frame in ctx.frames:
        if type(frame) is tuple and any(type(n) is ast.Attribute and n.attr == "_xla_computation_cache_is_initialized"
                                        for n in ast.walk(frame[0])):
            return True
    return False


_SAME_PATH_CALLS = frozenset({
    "os.path.join", "os.path.expanduser", "os.path.expandvars", "os.path.abspath", "os.path.realpath",
    "os.path.normpath", "os.getcwd", "tempfile.gettempdir", "pathlib.Path", "os.fspath",
})


def _same_for_every_process(model, expr, ctx, depth: int = 0) -> bool:
    """True when a path expression visibly has one value in every process: string
    constants, f-strings, ``+`` / ``/`` and ``os.path`` helpers over such values, names
    bound to them, and a parameter of the launched function other than the index (or an
    attribute of one: ``args.cache_dir``) that only launches fill, from the launching
    process's one value. A rank, another parameter or anything unseen: False (unknown never
    fires)."""
    if expr is None or expr is UNKNOWN or depth > 8:
        return False
    t = type(expr)
    if t is ast.Constant:
        return isinstance(expr.value, str)
    if t is ast.JoinedStr:
        return all(type(v) is ast.Constant
                   or (type(v) is ast.FormattedValue and _same_for_every_process(model, v.value, ctx, depth + 1))
                   for v in expr.values)
    if t is ast.BinOp and type(expr.op) in (ast.Add, ast.Div):
        return _same_for_every_process(model, expr.left, ctx, depth + 1) \
            and _same_for_every_process(model, expr.right, ctx, depth + 1)
    if t is ast.Call:
        q = model.call_name(expr, ctx)
        if q is None and type(expr.func) is ast.Name and expr.func.id == "str" \
                and model.lookup("str", ctx, expr.lineno) is None:
            q = "os.fspath"
        if q not in _SAME_PATH_CALLS or expr.keywords:
            return False
        return all(_same_for_every_process(model, a, ctx, depth + 1) for a in expr.args)
    if t is ast.Attribute:  # args.cache_dir of the namespace the launching process passed
        root = expr
        while type(root) is ast.Attribute:
            root = root.value
        return type(root) is ast.Name and not is_rank_value(model, expr, ctx) \
            and _launch_shared(model, root, ctx) and not _attr_stored(ctx.func, root.id)
    if t is ast.Name:
        if is_rank_value(model, expr, ctx):
            return False
        if _launch_shared(model, expr, ctx):
            return True
        values = model.values(expr, ctx)
        return bool(values) and all(_same_for_every_process(model, v, c, depth + 1) for v, c in values)
    return False


def _launch_shared(model, name: ast.Name, ctx) -> bool:
    """``name`` is a parameter, not the index, of the launched function it is read in, and
    the module calls that function only through multi-process launches: every process got
    a copy of the launching process's one value (:meth:`~flake8_xla.model.calls.Calls.launch_shared_param`)."""
    func = ctx.func
    bindings = model.lookup(name.id, ctx, getattr(name, "lineno", None))
    return func is not None and bool(bindings) and len(bindings) == 1 and bindings[0][1] == "param" \
        and bindings[0][2] is func and model.launch_shared_param(func, name.id)


def _attr_stored(func, name: str) -> bool:
    """``func`` assigns an attribute of ``name`` (``args.cache_dir = f"...{index}"``): the
    namespace may differ per process."""
    return any(type(n) is ast.Attribute and type(n.ctx) is not ast.Load and type(n.value) is ast.Name
               and n.value.id == name for n in ast.walk(func.node))


@rule
class InitializeCachePlacement(Rule):
    """## What it does
    Flags `xr.initialize_cache(...)` (the persistent compilation cache) called after XLA
    computations already ran in the same function (a sync, a training loop, a `.item()` of
    a device value, a helper that trains), or, in multi-process code, with one path for
    every process and `readonly=False` (the default): inside the function the launcher
    starts, or in the parent before `torch_xla.launch` / `xmp.spawn` (the processes inherit
    the setting).

    ## Why is this bad?
    `initialize_cache` asserts that the in-memory computation cache does not exist yet
    (`AssertionError: Computation cache has already been initialized`): it must run before
    the first computation. The cache is a directory of serialized executables; the
    torch_xla guide says multi-process training must give each process its own path
    ("cache init needs to happens inside the mp_fn"), else the processes write the same
    files at once.

    ## Known problems
    "Computations ran" means a visible sync, training loop, host read of a device value
    (`.item()`, `.cpu()`, `print(t)`, `float(t)`) or a module helper that trains, on every
    path to the call: creating the device, a tensor on it or moving a model does not create
    the computation cache (`XLAGraphExecutor::GetComputationCache` builds it at the first
    compilation), so it is no error (measured on 2.9 (CPU): `initialize_cache` passes after
    `torch_xla.device()`, `torch.ones(2, device=d)`, `model.to(d)`, a moved tensor's
    `.cpu()`; raises `AssertionError` after `torch_xla.sync()`, `.item()`, `print(t)` or
    `.cpu()` of a computed tensor). A path that cannot be seen (a helper's result, a
    parameter of a function also called directly, a per-process item `args.dirs[index]`, a
    namespace the launched function rewrites) is not reported; a parameter of the launched
    function other than the index, or its attribute (`args.cache_dir` of
    `torch_xla.launch(_mp_fn, args=(args,))`), is the launching process's one value,
    copied to every process. Not reported either: a call under a rank test
    (`if xr.global_ordinal() == 0:`) or a `_xla_computation_cache_is_initialized()` probe,
    nor the parent's call when the launched function calls `initialize_cache` itself. SPMD
    and single-process runs (one process) may share a path; a shared read-only mount uses
    `readonly=True`.

    ## Example
    ```python
    xr.initialize_cache("/tmp/xla_cache", readonly=False)
    torch_xla.launch(_mp_fn, args=())
    ```

    ## Use instead
    ```python
    def _mp_fn(index):
        xr.initialize_cache(f"/tmp/xla_cache_{index}", readonly=False)
        ...
    torch_xla.launch(_mp_fn, args=())
    ```

    ## References
    - torch_xla `torch_xla/runtime.py` `initialize_cache` (the assertion; since 2.2)
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` "Compilation Caching" (per
      process paths since the 2.5 guide, #7917); `examples/data_parallel/train_resnet_xla_ddp.py`
    - Applies to torch_xla 2.2-2.9 (`xr.initialize_cache` does not exist before 2.2).
    """

    code = "XLA901"
    reported_at = 'the `xr.initialize_cache(...)` call'
    name = "initialize-cache-placement"
    message = "xr.initialize_cache after XLA computations ran: AssertionError"
    fix = "call it before any device work"
    severity = "E"
    versions = "2.2+"
    bad = [
        "import torch_xla\nimport torch_xla.runtime as xr\n"
        "def _mp_fn(index):\n    xr.initialize_cache('/tmp/xla_cache', readonly=False)\n"
        "torch_xla.launch(_mp_fn, args=())\n",
        "import torch_xla\nimport torch_xla.runtime as xr\n"
        "def main():\n    torch_xla.sync()\n    xr.initialize_cache('/tmp/c')\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.runtime as xr\n"
        "def _mp_fn(index):\n    xr.initialize_cache(f'/tmp/xla_cache_{index}', readonly=False)\n"
        "torch_xla.launch(_mp_fn, args=())\n",
        "import torch_xla.runtime as xr\nxr.use_spmd()\nxr.initialize_cache('/tmp/xla_cache', readonly=False)\n",
    ]

    def check(self, model):
        if not _available(self.settings, "torch_xla.runtime", "initialize_cache"):
            return
        for call, ctx in model.calls_to(INITIALIZE_CACHE):
            if not model.in_xla_code(ctx) or _cache_probe(ctx):
                continue
            ran = model.computes_before(ctx, call.lineno)
            if ran is not None:
                yield self.finding(call, f"xr.initialize_cache after XLA computations ran (line {ran.lineno}): "
                                         "AssertionError")
                continue
            shared = self._shared(model, call, ctx)
            if shared is not None:
                yield self.finding(call, *shared)

    def _shared(self, model, call, ctx) -> tuple[str, str] | None:
        readonly = model.kwarg(call, "readonly", 1)
        if readonly is UNKNOWN or (readonly is not None and model.const(readonly, ctx) is not False):
            return None
        path = model.kwarg(call, "path", 0)
        if path is None or path is UNKNOWN or _rank_tested(model, ctx):
            return None
        if model.is_launched(ctx, multi_only=True):
            problem = ("xr.initialize_cache: one writable path for all processes",
                       "use a path per process: f'/tmp/xla_cache_{index}'")
        elif any(not single and lctx.scope is ctx.scope and lcall.lineno > call.lineno
                 for lcall, lctx, _, single in model.launches()) and not any(
                model.is_launched(c, multi_only=True) for _, c in model.calls_to(INITIALIZE_CACHE)):
            problem = ("xr.initialize_cache before the launch shares one writable path",
                       "call it in the launched function with f'/tmp/xla_cache_{index}'")
        else:
            return None
        return problem if _same_for_every_process(model, path, ctx) else None


#: calls that start the XLA runtime on a non-SPMD device (a device handle, its RNG, an ordinal,
#: a sync): measured on 2.9 (CPU), each before `xr.use_spmd()` makes the pytorch/xla#9735
#: program SIGSEGV (`devices()`, `get_xla_supported_devices()`, `wait_device_ops()`,
#: `addressable_device_count()`: RuntimeError); `xr.world_size()`, `global_runtime_device_count()`,
#: `process_index()`, `process_count()`, `device_type()`, `torch.manual_seed` and
#: `initialize_cache` do not
RUNTIME_STARTS = frozenset({
    "torch_xla.device", "torch_xla.core.xla_model.xla_device", "torch_xla.runtime.xla_device", "torch_xla.devices",
    "torch_xla.core.xla_model.get_xla_supported_devices", "torch_xla.core.xla_model.set_rng_state",
    "torch_xla.core.xla_model.get_rng_state", "torch_xla.manual_seed", "torch_xla.runtime.global_ordinal",
    "torch_xla.runtime.local_ordinal", "torch_xla.core.xla_model.get_ordinal",
    "torch_xla.core.xla_model.get_local_ordinal", "torch_xla.core.xla_model.is_master_ordinal",
    "torch_xla.runtime.addressable_device_count", "torch_xla.sync", "torch_xla.core.xla_model.mark_step",
    "torch_xla.core.xla_model.wait_device_ops",
})
USE_SPMD = "torch_xla.runtime.use_spmd"


def _unconditional(ctx, base) -> bool:
    """No ``if`` frame between ``ctx``'s frames and ``base`` (the function's own)."""
    node = ctx.frames or None
    while node is not None and node is not base:
        if type(node.frame) is tuple:
            return False
        node = node.parent
    return True


@rule
class UseSpmdAfterRuntimeStart(Rule):
    """## What it does
    Flags `xr.use_spmd()` reached after the XLA runtime was used on the same path: a device
    (`torch_xla.device()`, `xm.xla_device()`), its RNG (`xm.set_rng_state`,
    `torch_xla.manual_seed`), an ordinal (`xr.global_ordinal()`, `xm.is_master_ordinal()`), a
    sync, or a tensor or module placed on the device, earlier in the same function (on every
    path to the call), in a module helper called before it that does so unconditionally, or
    in a caller before the call that leads to it (three levels up; module level before the
    `main()` call).

    ## Why is this bad?
    `use_spmd()` switches the runtime to one virtual SPMD device. Once a real device was
    handed out, torch_xla warns "Replicating tensors already initialized on non-virtual XLA
    device" and forces the switch; tensors made afterwards without a sharding then crash
    the process (pytorch/xla#9735: SIGSEGV at the first computation), and every tensor made
    before is replicated onto every device (pytorch/xla#6680).

    ## Known problems
    Only calls and moves the model sees run the runtime: a library that creates the device
    inside (`accelerate`, a trainer) is not followed, nor a helper that does so under a
    condition. Counts that do not touch a device (`xr.world_size()`,
    `xr.global_runtime_device_count()`, `xr.process_index()`, `xr.device_type()`) and
    `torch.manual_seed` are fine before it. A branch that cannot run with the call
    (`if spmd: xr.use_spmd()` / `else: device = torch_xla.device()`) is not the same path.
    A call that repeats an earlier `use_spmd()` on the path (directly or in a helper that
    turns SPMD on before it makes the device) is not reported: SPMD was on before the
    device, and the first call has its own verdict.

    Measured on 2.9 (CPU, one replica): the #9735 program runs with `xr.use_spmd()` first and
    dies with SIGSEGV (exit 139) after the "Replicating tensors" warning when
    `torch_xla.device()`, `xm.xla_device()`, `xm.set_rng_state(42)`, `xm.get_rng_state()`,
    `torch_xla.manual_seed(1)`, `xr.global_ordinal()`, `xr.local_ordinal()`,
    `xm.is_master_ordinal()`, `torch_xla.sync()`, `xm.mark_step()`,
    `torch.zeros(2, device="xla")` or `nn.Linear(2, 2).to("xla")` ran before it;
    `torch_xla.devices()`, `xm.wait_device_ops()` and `xr.addressable_device_count()` before
    it raise `RuntimeError: Check failed ... CPU:0`; `xr.world_size()`,
    `xr.global_runtime_device_count()`, `xr.process_index()`, `xr.process_count()`,
    `xr.device_type()`, `torch.manual_seed(0)` and `xr.initialize_cache(...)` before it are
    harmless.

    ## Example
    ```python
    device = torch_xla.device()
    xm.set_rng_state(42)
    xr.use_spmd()
    ```

    ## Use instead
    ```python
    xr.use_spmd()      # first, before any device, RNG state or XLA tensor
    device = torch_xla.device()
    xm.set_rng_state(42)
    ```

    ## References
    - torch_xla `torch_xla/runtime.py` `use_spmd` (the "Replicating tensors already
      initialized" warning and `_xla_force_spmd_device`, #6680, 2.3-2.9; "call use_spmd() in
      the beginning of the program")
    - pytorch/xla#9735 (SIGSEGV for unmarked tensors after `torch_xla.device()` or a seed)
    - torch_xla `docs/source/perf/spmd_basic.md` (`xr.use_spmd()` at the top)
    - Applies to torch_xla 2.1-2.9 (`xr.use_spmd()` since 2.1).
    """

    code = "XLA906"
    fix_applicability = "unsafe"
    name = "use-spmd-after-runtime-start"
    message = "xr.use_spmd() after the runtime started: SIGSEGV or replicated tensors"
    fix = "call it first, before any device, seed or XLA tensor"
    severity = "E"
    versions = "2.1+"
    reported_at = 'the `xr.use_spmd()` call'
    bad = ["import torch_xla\nimport torch_xla.runtime as xr\ndevice = torch_xla.device()\nxr.use_spmd()\n",
           "import torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n"
           "def main():\n    xm.set_rng_state(42)\n    xr.use_spmd()\n"]
    good = ["import torch_xla\nimport torch_xla.runtime as xr\nxr.use_spmd()\ndevice = torch_xla.device()\n",
            "import torch_xla.runtime as xr\nn = xr.global_runtime_device_count()\nxr.use_spmd()\n"]

    DEPTH = 3

    def check(self, model):
        if not _available(self.settings, "torch_xla.runtime", "use_spmd"):
            return
        for call, ctx in model.calls_to(USE_SPMD):
            if not model.in_xla_code(ctx) or model.is_launched(ctx, multi_only=True):
                continue
            start = self._started_before(model, call, ctx)
            if start is not None:
                yield self.finding(call, "xr.use_spmd() after the runtime started "
                                         f"(line {start.lineno}): SIGSEGV or replicated tensors")

    def _started_before(self, model, node, ctx):
        """The first runtime start on every path to ``node`` (its function, then its callers)
        that no earlier ``use_spmd()`` on that path precedes; None when none is seen."""
        todo = [(node, ctx, 0)]
        seen: set[int] = set()
        while todo:
            n, c, depth = todo.pop(0)
            found, spmd_first = None, False
            for event, ectx, kind in self._events(model).get(id(c.scope), ()):
                if event.lineno >= n.lineno:
                    break
                if getattr(event, "end_lineno", event.lineno) < n.lineno \
                        and model.branch_frames(ectx) <= model.branch_frames(c) \
                        and not model.exclusive((event, ectx), (n, c)):
                    if kind == "spmd":
                        spmd_first = True  # SPMD was on before: this call repeats it (the earlier one has its own verdict)
                        break
                    found = found or event
            if spmd_first:
                continue
            if found is not None:
                return found
            if c.func is None or depth >= self.DEPTH or id(c.func) in seen:
                continue
            seen.add(id(c.func))
            for site, sctx in model.calls_of(c.func):
                if not model.is_launched(sctx) and sctx.scope.kind != "lambda":
                    todo.append((site, sctx, depth + 1))
        return None

    def _events(self, model) -> dict:
        """``id(scope) -> [(node, ctx, kind)]`` sorted by line, in XLA-on code: ``"start"`` for
        the calls that start the runtime, moves and factories that place on the XLA device
        and calls of module functions whose first such event is a start; ``"spmd"`` for
        ``use_spmd()`` and functions that turn SPMD on before any start."""
        table = model._cache.get("xla906_events")
        if table is not None:
            return table
        table = {}
        for call, ctx in model.calls:
            if model.in_xla_code(ctx):
                kind = self._event(model, call, ctx, 0)
                if kind is not None:
                    table.setdefault(id(ctx.scope), []).append((call, ctx, kind))
        for rows in table.values():
            rows.sort(key=lambda r: (r[0].lineno, r[0].col_offset))
        model._cache["xla906_events"] = table
        return table

    def _event(self, model, call, ctx, depth) -> str | None:
        q = model.call_name(call, ctx)
        if q is not None:
            if q == USE_SPMD:
                return "spmd"
            if q in RUNTIME_STARTS or (q in TORCH_FACTORIES and model._factory_kind(call, ctx) == "device"):
                return "start"
            if depth == 0 and model.project_lookup is not None and q.split(".", 1)[0] not in ("torch", "torch_xla"):
                return self._project_event(model, call, ctx)  # (config.set_seed: another module's)
            return None
        f = call.func
        if type(f) is ast.Attribute and f.attr in ("to", "xla") and model.move_target(call, ctx) == "xla":
            return "start"
        if depth >= 2:
            return None
        targets = model.function_of(f, ctx)
        if not targets and depth == 0 and model.project_lookup is not None:
            return self._project_event(model, call, ctx)
        kinds = {self._func_event(model, g, depth + 1) for g in targets}
        return "spmd" if "spmd" in kinds else "start" if "start" in kinds else None

    @staticmethod
    def _project_event(model, call, ctx) -> str | None:
        """Project mode: ``"start"`` for a call of another project module's function whose own
        code starts the runtime (``set_seed(cfg.seed)`` calling ``torch_xla.manual_seed``;
        :attr:`~flake8_xla.project.HelperFacts.xla_calls`) and turns no SPMD on; else None."""
        helpers = model.callee_helpers(call, ctx)
        if not helpers or any(USE_SPMD in h.xla_calls for h in helpers):
            return None
        return "start" if any(h.runs & RUNTIME_STARTS for h in helpers) else None

    def _func_event(self, model, func, depth) -> str | None:
        """What calling ``func`` does first: ``"spmd"`` (a ``use_spmd()`` anywhere in its own
        code before its first unconditional start), ``"start"``, or None."""
        key = ("xla906_func", id(func), depth)
        cache = model._cache
        if key not in cache:
            cache[key] = None  # recursion: unknown
            base = func.ctx.frames if func.ctx is not None else None
            result = None
            for call, c in sorted(((call, c) for call, c in func.calls if c.func is func),
                                  key=lambda r: (r[0].lineno, r[0].col_offset)):
                kind = self._event(model, call, c, depth)
                if kind == "spmd" or (kind == "start" and _unconditional(c, base)):
                    result = kind
                    break
            cache[key] = result
        return cache[key]


#: the host's share of a multi-host SPMD run (pytorch/xla#5331's sampler arguments)
PROCESS_APIS = frozenset({"torch_xla.runtime.process_index", "torch_xla.runtime.process_count",
                          "torch_xla.runtime.host_index"})
_DEVICE_LOADERS = ("torch_xla.distributed.parallel_loader.MpDeviceLoader",
                   "torch_xla.distributed.parallel_loader.ParallelLoader")


@rule
class SpmdHostLocalBatch(Rule):
    """## What it does
    In an SPMD program whose `DataLoader` gives each host its own share of the data (a
    sampler or dataset split by `xr.process_index()` / `xr.process_count()`: the
    multi-host recipe), flags `xs.mark_sharding(...)` of a batch drawn from that loader
    inside the loop over it (the loop's target, an item of it, or a name assigned from
    it in the loop). A hint, reported at the `mark_sharding` call.

    ## Why is this bad?
    `mark_sharding` treats its tensor as the *global* value: every host must pass the same
    full tensor, and each keeps only the shards of its own devices. A host-local batch
    differs per host, so each host keeps its devices' slice of its own batch and drops the
    rest: with N hosts most of every host's data never reaches a device, and the logical
    global batch is one host's batch size (pytorch/xla#7850). The loader has to say that
    its batches are host-local: `MpDeviceLoader(..., input_sharding=ShardingSpec(...,
    minibatch=True))` assembles the global batch from every host's share.

    ## Known problems
    A hint: a run on one host (`process_count() == 1`) loses nothing. Only a sharding
    call in the loop body over the loader's batches is reported (not one in a helper the
    loop calls), and only when the split names `xr.process_index()` /
    `xr.process_count()` (through names); activations and parameters are not batches. A
    loop over an `MpDeviceLoader` / `ParallelLoader` given `input_sharding=` is left alone.

    ## Example
    ```python
    sampler = DistributedSampler(ds, num_replicas=xr.process_count(), rank=xr.process_index())
    loader = DataLoader(ds, batch_size=8, sampler=sampler)
    for x, y in loader:
        x = x.to(device)
        xs.mark_sharding(x, mesh, ("data", None))
    ```

    ## Use instead
    ```python
    loader = pl.MpDeviceLoader(
        DataLoader(ds, batch_size=8, sampler=sampler), device,
        input_sharding=xs.ShardingSpec(mesh, ("data", None), minibatch=True))
    for x, y in loader:
        ...
    ```

    ## References
    - pytorch/xla#7850 (multi-host SPMD with host-local batches and `mark_sharding`)
    - pytorch/xla#5331 (multi-host batch sharded data loading: the `process_count()` /
      `process_index()` sampler and `ShardingSpec(..., minibatch=True)`, 2.1);
      `torch_xla/distributed/spmd/xla_sharding.py` `ShardingSpec.minibatch` (2.1-2.9)
    - torch_xla `docs/source/perf/spmd_advanced.md` "Sharding-Aware Host-to-Device Data Loading"
    - Applies to torch_xla 2.1-2.9.
    """

    code = "XLA907"
    name = "spmd-host-local-batch"
    message = "mark_sharding of a host-local batch drops most of each host's data"
    fix = "use MpDeviceLoader(..., input_sharding=ShardingSpec(mesh, spec, minibatch=True))"
    severity = "W"
    versions = "2.1+"
    hint = True
    reported_at = 'the `xs.mark_sharding(...)` call'
    bad = ["import torch_xla.runtime as xr\nimport torch_xla.distributed.spmd as xs\n"
           "from torch.utils.data import DataLoader, DistributedSampler\n"
           "def train(ds, mesh, device):\n    xr.use_spmd()\n"
           "    sampler = DistributedSampler(ds, num_replicas=xr.process_count(), rank=xr.process_index())\n"
           "    for x in DataLoader(ds, batch_size=8, sampler=sampler):\n"
           "        x = x.to(device)\n        xs.mark_sharding(x, mesh, ('data', None))\n"]
    good = ["import torch_xla.runtime as xr\nimport torch_xla.distributed.spmd as xs\n"
            "from torch.utils.data import DataLoader\n"
            "def train(ds, mesh, device):\n    xr.use_spmd()\n"
            "    for x in DataLoader(ds, batch_size=8):\n"
            "        x = x.to(device)\n        xs.mark_sharding(x, mesh, ('data', None))\n"]

    def check(self, model):
        if self.settings.target_version < (2, 1) or not model.spmd_program():
            return
        marks = [q for q in model.call_index() if q.startswith(SPMD_PACKAGES) and q.endswith(".mark_sharding")]
        if not marks:
            return
        by_loop: dict[int, list] = {}
        for call, ctx in model.calls_to(*marks):
            if call.args and model.in_xla_code(ctx):
                for loop in ctx.loops:
                    by_loop.setdefault(id(loop), []).append((call, ctx))
        seen: set[int] = set()
        for loop in model.loops:
            marked = by_loop.get(id(loop))
            if not marked or type(loop.node) not in (ast.For, ast.AsyncFor) or not self._host_local(model, loop):
                continue
            batch = self._batch_names(loop.node)
            for call, ctx in marked:
                if _batch_root(call.args[0]) in batch and id(call) not in seen:
                    seen.add(id(call))
                    yield self.finding(call)

    def _host_local(self, model, loop) -> bool:
        """The loop iterates a ``DataLoader`` split per host, and no device loader given
        ``input_sharding=`` stands between."""
        it = loop.node.iter
        if self._input_sharded(model, it, loop.ctx, 0):
            return False
        return any(self._per_host(model, call, c) for call, c in model.loader_sources(it, loop.ctx))

    def _input_sharded(self, model, expr, ctx, depth) -> bool:
        if depth > 6:
            return False
        if type(expr) is ast.Name:
            return any(v is not None and self._input_sharded(model, v, c, depth + 1)
                       for v, c in model.values(expr, ctx) or ())
        if type(expr) is not ast.Call:
            return False
        f = expr.func
        if model.call_name(expr, ctx) in _DEVICE_LOADERS:
            return any(k.arg in ("input_sharding", None) for k in expr.keywords)
        if type(f) is ast.Attribute:
            return self._input_sharded(model, f.value, ctx, depth + 1)  # ParallelLoader(...).per_device_loader(d)
        if type(f) is ast.Name and f.id in ("enumerate", "iter", "tqdm") and expr.args:
            return self._input_sharded(model, expr.args[0], ctx, depth + 1)
        return False

    def _per_host(self, model, call, ctx) -> bool:
        """The loader's sampler or dataset names ``xr.process_index()`` / ``process_count()``."""
        args = [a for a in (model.kwarg(call, "sampler", 3), model.kwarg(call, "dataset", 0),
                            model.kwarg(call, "batch_sampler", 4)) if isinstance(a, ast.AST)]
        return any(self._names_process(model, a, ctx, 0) for a in args)

    def _names_process(self, model, expr, ctx, depth) -> bool:
        if depth > 4:
            return False
        for n in ast.walk(expr):
            t = type(n)
            if t is ast.Call and model.call_name(n, ctx) in PROCESS_APIS:
                return True
            if t is ast.Name and type(n.ctx) is ast.Load and model.qualname(n, ctx) is None:
                for v, c in model.values(n, ctx) or ():
                    if v is not None and c is not None and self._names_process(model, v, c, depth + 1):
                        return True
        return False

    @staticmethod
    def _batch_names(loop_node) -> set[str]:
        """The loop's target names and the names assigned in its body from them."""
        names = {n.id for n in ast.walk(loop_node.target) if type(n) is ast.Name}
        for stmt in loop_node.body:
            nested = type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            for node in () if nested else ast.walk(stmt):
                if type(node) is ast.Assign and (_batch_root(node.value) in names or (
                        type(node.value) is ast.Tuple and any(_batch_root(e) in names for e in node.value.elts))):
                    for target in node.targets:
                        names.update(n.id for n in ast.walk(target) if type(n) is ast.Name)
        return names


def _batch_root(expr) -> str | None:
    """The name a batch expression hangs from: ``batch["x"].to(dev).view(...)`` -> ``batch``; a
    call of a function (``model(x)``: an activation) has none."""
    for _ in range(16):
        t = type(expr)
        if t is ast.Name:
            return expr.id
        if t in (ast.Subscript, ast.Attribute):
            expr = expr.value
        elif t is ast.Call and type(expr.func) is ast.Attribute:
            expr = expr.func.value
        else:
            return None
    return None


#: process-level counts and ordinals that are 1 / 0 under SPMD (one process drives every
#: device): test/spmd/test_xla_spmd_python_api_interaction.py, 2.1-2.9
_COUNTS = ("torch_xla.runtime.world_size", "torch_xla.runtime.global_device_count",
           "torch_xla.core.xla_model.xrt_world_size")
_ORDINALS = ("torch_xla.runtime.global_ordinal", "torch_xla.core.xla_model.get_ordinal")
_MESHES = ("torch.distributed.device_mesh.init_device_mesh", "torch.distributed.init_device_mesh")
_SAMPLERS = ("torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler")
_SPLIT_BY_NODE = "datasets.distributed.split_dataset_by_node"
#: keyword arguments that pick a host's share of the data, whatever the callee (a dataset's own)
_SHARD_KEYWORDS = frozenset({"shard", "shard_id", "shard_index", "shard_rank", "num_shards", "shard_count"})


@rule
class SpmdWorldSizeMisuse(Rule):
    """## What it does
    In an SPMD program (XLA code that calls `xr.use_spmd()`, sets `XLA_USE_SPMD=1` or
    calls the sharding API, and starts no second process): flags `xr.world_size()`,
    `xr.global_device_count()` (and the old `xm.xrt_world_size()`) used as a device count,
    that is in a `Mesh(...)` / `init_device_mesh("xla", ...)`, and those counts or
    `xr.global_ordinal()` (`xm.get_ordinal()`) used to shard data (`DistributedSampler`'s
    `num_replicas=` / `rank=`, `split_dataset_by_node`, `.shard(num_shards=, index=)`, a
    `shard=` / `num_shards=` keyword of any call, the start of a strided slice
    `files[xr.global_ordinal()::n]`), directly or through names.

    ## Why is this bad?
    Under SPMD one process drives every device of its host: the process-level APIs see one
    logical device, so `xr.world_size()` and `xr.global_device_count()` are 1 and
    `xr.global_ordinal()` is 0 on every host. A mesh built from them has one device (the
    model is not sharded), and data sharded by them is the same on every host.

    Also a count multiplied into a per-device quantity (`per_device_batch * xr.world_size()`,
    a learning-rate scale): it multiplies by 1; and a global quantity divided by a count
    (`global_batch // xr.world_size()`, `steps //= xr.world_size()`): it divides by 1.

    ## Known problems
    Other uses (logging, `if xr.world_size() > 1:`, other arithmetic) are not reported; a
    scale or a division is reported only where the count is an operand of the `*` or the
    divisor of the `/` / `//` itself. A script that
    turns SPMD on only under a flag keeps its other mode: a sampler counts only on the
    branch that turns SPMD on, in a function reached from one that turns it on
    unconditionally, or in one called only from the flagged branch after the switch (`if
    args.spmd: xr.use_spmd(); build(ds)`; a `Mesh` is SPMD wherever it is); a count picked by mode
    (`xr.world_size() if not spmd else ...`) is not reported. In project mode, a helper
    module's function that a multi-process launch of the project reaches is not SPMD code,
    even when an SPMD script reaches the module too. A launch after `xr.use_spmd()` in the
    launching process (XLA004: `torch_xla.launch` raises there from 2.5, and its fix calls the
    function directly) leaves the program an SPMD one. The finding replaces XLA801 /
    XLA802 on the old `xm` spellings: one fix.

    ## Example
    ```python
    xr.use_spmd()
    num_devices = xr.world_size()
    mesh = xs.Mesh(np.arange(num_devices), (num_devices, 1), ("data", "model"))
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr

    xr.use_spmd()
    num_devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(num_devices), (num_devices, 1), ("data", "model"))
    ```
    To split data between hosts: `xr.process_count()` / `xr.process_index()`.

    ## References
    - torch_xla `docs/source/perf/spmd_basic.md` (the mesh from `xr.global_runtime_device_count()`)
    - torch_xla `test/spmd/test_xla_spmd_python_api_interaction.py` (`world_size() == 1`,
      `global_device_count() == 1`, `global_ordinal() == 0` under SPMD, 2.1-2.9);
      `torch_xla/runtime.py` `global_runtime_device_count`, `process_index`, `process_count`
    - `examples/data_parallel/train_resnet_spmd_data_parallel.py` ("only one process that
      handles all runtime devices")
    - Applies to torch_xla 2.1-2.9.
    """

    code = "XLA902"
    reported_at = 'the `xr.world_size()` / `xr.global_ordinal()` (or older spelling) call'
    name = "spmd-world-size-misuse"
    message = "xr.world_size() is 1 under SPMD, not the device count"
    fix = "use xr.global_runtime_device_count()"
    severity = "E"
    versions = "2.1+"
    supersedes = ("XLA801", "XLA802")
    bad = [
        "import numpy as np\nimport torch_xla.runtime as xr\nimport torch_xla.distributed.spmd as xs\n"
        "xr.use_spmd()\nn = xr.world_size()\nmesh = xs.Mesh(np.arange(n), (n, 1), ('data', 'model'))\n",
    ]
    good = [
        "import numpy as np\nimport torch_xla.runtime as xr\nimport torch_xla.distributed.spmd as xs\n"
        "xr.use_spmd()\nn = xr.global_runtime_device_count()\nmesh = xs.Mesh(np.arange(n), (n, 1), ('data', 'model'))\n",
        "import torch_xla.runtime as xr\nimport torch_xla\n"
        "def f(i, ds):\n    return xr.world_size()\ntorch_xla.launch(f, args=(None,))\n",
    ]

    def check(self, model):
        if not at_least(self.settings, "2.1") or not model.spmd_program():
            return
        seen: set[int] = set()
        for call, ctx, use in self._scaled_counts(model):
            seen.add(id(call))
            yield self._finding(call, model.call_name(call, ctx), use)
        for call, ctx in self._sink_calls(model):  # in walk order: the first use of a shared source names it
            q = model.call_name(call, ctx)
            sinks = self._sinks(model, call, ctx, q)
            if not sinks or not model.in_xla_code(ctx) \
                    or not (model.runs_spmd(ctx) or (q or "").startswith(SPMD_PACKAGES)):
                continue  # a Mesh is SPMD itself; a sampler must sit where SPMD is on
            for arg, use in sinks:
                for source, sq in self._sources(model, arg, ctx):
                    if id(source) in seen:
                        continue
                    seen.add(id(source))
                    yield self._finding(source, sq, use)
        for arg, ctx in self._shard_args(model):  # MyShards(..., shard=xr.global_ordinal()), files[ordinal::n]
            if not (model.in_xla_code(ctx) and model.runs_spmd(ctx)):
                continue
            for source, sq in self._sources(model, arg, ctx):
                if id(source) not in seen:
                    seen.add(id(source))
                    yield self._finding(source, sq, "data")

    @staticmethod
    def _shard_args(model) -> list:
        """``(expression, ctx)`` that pick a host's share of the data in a module that asks for
        the ordinal: a keyword argument named for a shard (``shard=``, ``num_shards=``, any
        callee) and the start of a strided slice (``files[xr.global_ordinal()::n]``)."""
        ordinals = model.calls_to(*_ORDINALS)
        if not ordinals:
            return []
        out = [(k.value, ctx) for call, ctx in model.calls for k in call.keywords if k.arg in _SHARD_KEYWORDS]
        done = set()
        for _, ctx in ordinals:
            root = ctx.func.node if ctx.func is not None else None
            if root is None or id(root) in done:
                continue
            done.add(id(root))
            for node in ast.walk(root):
                if type(node) is ast.Subscript and type(node.slice) is ast.Slice and node.slice.step is not None \
                        and node.slice.lower is not None:
                    out.append((node.slice.lower, ctx))
        return out

    @staticmethod
    def _scaled_counts(model) -> list:
        """``(call, ctx, use)`` for ``xr.world_size()`` / ``xr.global_device_count()`` in SPMD
        code multiplied into a per-device quantity (``per_device_batch * xr.world_size()``, a
        learning-rate scale: use ``"scale"``), or dividing a global one (``global_batch //
        xr.world_size()``, ``steps //= xr.world_size()``: use ``"divide"``): the operand of a
        ``*`` (``*=``) or the divisor of a ``/`` / ``//`` (``/=``, ``//=``) in the statement
        that calls it."""
        out = []
        for call, ctx in model.calls_to(*_COUNTS):
            if not model.in_xla_code(ctx) or not model.runs_spmd(ctx):
                continue
            owner = ctx.func.node if ctx.func is not None else model.tree
            stmt = model._statements(owner).get(id(call))
            if stmt is None:
                continue
            for node in ast.walk(stmt):
                t = type(node)
                if t is ast.BinOp or t is ast.AugAssign:
                    op = type(node.op)
                    operands = (node.left, node.right) if t is ast.BinOp else (node.value,)
                    if op is ast.Mult and call in operands:
                        out.append((call, ctx, "scale"))
                        break
                    if op in (ast.Div, ast.FloorDiv) and call is operands[-1]:
                        out.append((call, ctx, "divide"))
                        break
        return out

    @staticmethod
    def _sink_calls(model):
        """The calls that may take a count or a shard (see :meth:`_sinks`: the callees it
        names, by the call index, and ``.shard(...)`` calls), in walk order."""
        names = [q for q in model.call_index() if q in _MESHES or q in _SAMPLERS or q == _SPLIT_BY_NODE
                 or (q.startswith(SPMD_PACKAGES) and q.rsplit(".", 1)[-1] in ("Mesh", "HybridMesh"))]
        ids = {id(call) for call, _ in model.calls_to(*names)} if names else set()
        ids.update(id(call) for call, _ in model.method_calls("shard"))
        return [rec for rec in model.calls if id(rec[0]) in ids] if ids else []

    @staticmethod
    def _sinks(model, call, ctx, q):
        """``(argument, use)`` pairs of a call that take a device count or a data shard."""
        out = []
        if q is not None and q.startswith(SPMD_PACKAGES) and q.rsplit(".", 1)[-1] in ("Mesh", "HybridMesh"):
            out += [(a, "mesh") for a in call.args] + [(k.value, "mesh") for k in call.keywords]
        elif q in _MESHES and call.args and model.const(call.args[0], ctx) == "xla":
            out += [(a, "mesh") for a in call.args[1:]] + [(k.value, "mesh") for k in call.keywords]
        elif q in _SAMPLERS:
            for name, pos in (("num_replicas", 1), ("rank", 2)):
                arg = model.kwarg(call, name, pos)
                if isinstance(arg, ast.AST):
                    out.append((arg, "data"))
        elif q == _SPLIT_BY_NODE:
            for name, pos in (("rank", 1), ("world_size", 2)):
                arg = model.kwarg(call, name, pos)
                if isinstance(arg, ast.AST):
                    out.append((arg, "data"))
        elif q is None and type(call.func) is ast.Attribute and call.func.attr == "shard":
            for name, pos in (("num_shards", 0), ("index", 1)):  # datasets.Dataset.shard
                arg = model.kwarg(call, name, pos)
                if isinstance(arg, ast.AST):
                    out.append((arg, "data"))
        return out

    @staticmethod
    def _sources(model, expr, ctx):
        """The count / ordinal calls an expression is computed from, through names bound on
        the same branch as the use; never inside ``a if t else b`` (code that picks the
        count by mode)."""
        out = []
        todo = [(expr, ctx, 0)]
        budget = 64
        while todo and budget > 0:
            budget -= 1
            e, c, depth = todo.pop()
            nodes = [e]
            while nodes:
                node = nodes.pop()
                t = type(node)
                if t is ast.IfExp or t in (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp):
                    continue
                if t is ast.Call:
                    q = model.call_name(node, c)
                    if q in _COUNTS or q in _ORDINALS:
                        out.append((node, q))
                        continue
                elif t is ast.Name and type(node.ctx) is ast.Load and depth < 6:
                    values = model.values(node, c)
                    if values:
                        todo.extend((v, vc, depth + 1) for v, vc in values
                                    if v is not None and vc is not None and frames_within(vc.frames, c.frames)
                                    and (vc.func is c.func or vc.func is None))
                    continue
                nodes.extend(ast.iter_child_nodes(node))
        return out

    def _finding(self, source, q, use):
        shown = short_name(q) + "()"
        if q in _ORDINALS:
            return self.finding(source, f"{shown} is 0 on every host under SPMD, used to shard data",
                                "shard by host: xr.process_index()")
        if use == "mesh":
            return self.finding(source, f"{shown} is 1 under SPMD, not the device count")
        if use == "scale":
            return self.finding(source, f"{shown} is 1 under SPMD: this scale is not by the device count")
        if use == "divide":
            return self.finding(source, f"{shown} is 1 under SPMD: this divides by 1, not the device count")
        return self.finding(source, f"{shown} is 1 under SPMD, used to shard data",
                            "shard by host: xr.process_count()")


#: calls that tie weights again (``model.tie_weights()``, Lightning's
#: ``set_shared_parameters(model, shared)``)
_TIE_CALL = re.compile(r"(?i)tie|shared_param")


def _tie_call(call: ast.Call, name: str | None) -> bool:
    """``name.tie_weights()`` / ``tie_weights(name)`` / ``set_shared_parameters(name, ...)``
    (any receiver or argument when ``name`` is None)."""
    f = call.func
    ident = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
    if ident is None or not _TIE_CALL.search(ident):
        return False
    if name is None:
        return True
    if type(f) is ast.Attribute and _under(dotted(f.value), name):
        return True
    return any(_under(dotted(a), name) for a in call.args)


@rule
class WeightTyingBeforeToDevice(Rule):
    """## What it does
    Flags a weight tie (`a.x.weight = b.y.weight`, also `self.head.weight =
    self.embed.weight` in a module class's `__init__`) followed in XLA code by a move of
    that module to the XLA device (`model.to(torch_xla.device())`, `MyModel().to(device)`
    with `device` visibly the XLA device) with no second tie after the move (the same
    assignment, or a `tie_weights()` call on the module).

    ## Why is this bad?
    `Module.to()` gives every module its own new parameter when the device type changes
    (an XLA tensor cannot take a CPU tensor's place), so the two modules that shared one
    parameter get two independent copies on the device: the weights are silently untied
    and train apart.

    Also flags, at the move, a transformers model with an LM head built with
    `from_pretrained` / `from_config` (`AutoModelForCausalLM`, `GPT2LMHeadModel`,
    `T5ForConditionalGeneration`, ...: the library ties its embeddings) moved to the XLA
    device with no `model.tie_weights()` after the move.

    ## Known problems
    Only ties and moves in this file are seen: a model class imported from another module
    (nanoGPT's `GPT` in `model.py`) is not; transformers models only through the
    constructors above, moved with `.to(...)` (`accelerator.prepare(...)` is not followed).
    A device that cannot be seen (a parameter) is not taken for the XLA device. The
    transformers shape is silent with `tie_word_embeddings=False` (on the load or set on a
    config anywhere in the module), for a checkpoint literal of a family that does not tie
    (Llama 2 / 3 / 3.1, Mistral, Mixtral), for classes with no LM head (`AutoModel`) and with
    a training framework that re-ties after its move (the HF `Trainer`, Lightning); an
    `Auto...` class loading a checkpoint that does not tie gets harmless advice (its
    `tie_weights()` does nothing).

    ## Example
    ```python
    model.lm_head.weight = model.embed.weight
    model.to(torch_xla.device())
    ```

    ## Use instead
    ```python
    model.to(torch_xla.device())
    model.lm_head.weight = model.embed.weight   # or model.tie_weights()
    ```
    A transformers model: `model.to(device)` then `model.tie_weights()`.

    ## References
    - torch_xla `docs/source/learn/troubleshoot.md` "XLA Tensor Quirks" 4 ("This 'tying' of
      module weights should be done AFTER the modules are moved to an XLA device"), #1335
    - PyTorch `torch/nn/modules/module.py` `Module._apply` (a new `Parameter` per module
      when `_has_compatible_shallow_copy_type` is false, as for CPU to XLA)
    - Lightning `src/lightning/pytorch/strategies/xla.py` `setup` (finds the shared
      parameters before `model_to_device()` and sets them again after it)
    - transformers#18676 (tied embeddings untied by the move to XLA); transformers
      `PreTrainedModel.tie_weights` (`tie_word_embeddings`, default True in `PretrainedConfig`)
    - Measured on 2.9 (CPU): a module whose `head.weight` is `emb.weight` has two different
      parameters after `.to(torch_xla.device())`.
    - Applies to every torch_xla release.
    """

    code = "XLA903"
    reported_at = 'the tying assignment (`model.head.weight = model.embed.weight`), or for a transformers model the move (`model.to(device)`)'
    name = "weight-tying-before-to-device"
    message = "weights tied before the module moves to XLA, which unties them"
    fix = "tie them after the .to(device)"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch_xla\n"
        "def build(model):\n    model.lm_head.weight = model.embed.weight\n"
        "    model.to(torch_xla.device())\n    return model\n",
    ]
    good = [
        "import torch_xla\n"
        "def build(model):\n    model.to(torch_xla.device())\n"
        "    model.lm_head.weight = model.embed.weight\n    return model\n",
    ]

    def check(self, model):
        ties = model.weight_ties()
        if not ties:
            yield from self._library_tied(model)
            return
        index = _TieIndex(model)
        yield from self._library_tied(model, index)
        by_class: dict[int, object] = {}
        for target, value, ctx in ties:
            root = _root_name(target)
            if root is None:
                continue
            func = ctx.func
            if func is not None and func.cls is not None and func.params and root == func.params[0]:
                if id(func) not in by_class:
                    by_class[id(func)] = self._class_move(model, func, index)
                move = by_class[id(func)]
            else:
                move = self._scope_move(model, root, target, ctx, index)
            if move is not None:
                yield self.finding(target, f"weights tied before the move to XLA on line {move.lineno}, "
                                           "which unties them")

    def _library_tied(self, model, index=None):
        """A transformers model with an LM head (`from_pretrained` / `from_config`: the library
        ties its embeddings) moved to the XLA device with no `tie_weights()` after the move."""
        loads = [(c, x) for c, x in model.calls
                 if type(c.func) is ast.Attribute and c.func.attr in _HF_LOADERS and _hf_tied_head(model, c, x)]
        if not loads or model.uses_framework() or _untied_by_config(model):
            return
        index = index or _TieIndex(model)
        load_ids = {id(c) for c, _ in loads}
        for call, ctx in index.xla_moves:
            receiver = call.func.value
            if type(receiver) is ast.Call:
                if id(receiver) not in load_ids:
                    continue
                name = index.bound_name(call)
            else:
                values = model.values(receiver, ctx) if type(receiver) is ast.Name else None
                if not values or any(id(v) not in load_ids for v, _ in values):
                    continue
                name = receiver.id
            if name is None or index.tied_after(ctx, name.split(".")[0], call.lineno, None):
                continue
            yield self.finding(call, "transformers model moved to XLA: the move unties the embeddings it tied",
                               f"call {name[:24]}.tie_weights() after the move")

    @staticmethod
    def _scope_move(model, root, target, ctx, index):
        """``m.a.weight = m.b.weight`` then ``m.to(xla)`` in the same scope, not tied again."""
        move = index.first_xla_move(ctx, root, target.lineno)
        if move is None or index.tied_after(move[1], root, move[0].lineno, dotted(target)):
            return None
        return move[0]

    def _class_move(self, model, func, index):
        """A tie in a module class's ``__init__`` (or a method it calls on ``self``), then an
        instance of the class moved to XLA with no tie after it."""
        cls = func.cls
        if not model.is_module_class(cls) or not self._runs_at_init(model, func):
            return None
        if any(name in model._method_table(cls) for name in ("_apply", "to")):
            return None  # the class moves its own parameters
        tie_methods = index.tie_methods(cls)
        if any(m.name == "forward" for m in tie_methods):
            return None  # tied again on every call of the module
        for call, ctx in index.xla_moves:
            receiver = call.func.value
            if not self._instance_of(model, receiver, ctx, cls):
                continue
            name = dotted(receiver) if type(receiver) is not ast.Call else index.bound_name(call)
            if name is None:
                continue  # what holds the moved module cannot be seen: unknown
            if index.tied_after(ctx, name, call.lineno, None) or any(
                    index.method_called_after(ctx, name, m, call.lineno) for m in tie_methods):
                continue
            if "." in name and index.tied_anywhere(ctx, name, tie_methods):
                continue  # `self.model` may be tied again in another method
            return call
        return None

    @staticmethod
    def _runs_at_init(model, func) -> bool:
        if func.name == "__init__":
            return True
        init = model._method_table(func.cls).get("__init__")
        if init is None:
            return False
        for call, ctx in init.calls:
            f = call.func
            if type(f) is ast.Attribute and type(f.value) is ast.Name and init.params \
                    and f.value.id == init.params[0] and f.attr == func.name:
                return True
        return False

    @staticmethod
    def _instance_of(model, expr, ctx, cls) -> bool:
        """``expr`` builds or holds an instance of ``cls`` (or of a subclass in this file)."""
        values = [(expr, ctx)] if type(expr) is ast.Call else model.values(expr, ctx)
        if not values:
            return False
        for value, vctx in values:
            node = value
            for _ in range(8):
                if type(node) is ast.Call and type(node.func) is ast.Attribute \
                        and model.call_name(node, vctx) is None \
                        and node.func.attr in ("train", "eval", "float", "half", "bfloat16", "double", "to", "xla"):
                    node = node.func.value
                    continue
                break
            if type(node) is not ast.Call or type(node.func) is not ast.Name:
                return False
            built = model.class_named(node.func.id, vctx)
            if built is None or cls not in model.mro(built):
                return False
        return True


class _TieIndex:
    """Per-module indexes for XLA903, built once: moves to XLA, ties, tie calls and method
    calls by scope and receiver, so each question is a bisect."""

    def __init__(self, model):
        self.model = model
        self.xla_moves = []
        self.moves_by_root: dict = {}  # (scope id, root) -> [(line, call, ctx)] of `root.to(xla)`
        for call, ctx in model.calls:
            f = call.func
            if type(f) is ast.Attribute and f.attr in ("to", "xla") and model.call_name(call, ctx) is None \
                    and model.move_target(call, ctx) == "xla" and model.in_xla_code(ctx):
                self.xla_moves.append((call, ctx))
                key = dotted(f.value)
                if key is not None and "." not in key:
                    self.moves_by_root.setdefault((id(ctx.scope), key), []).append((call.lineno, call, ctx))
        self.tie_lines: dict = {}  # (scope id, root) -> lines of tie assignments; (scope id, text) too
        for target, _, ctx in model.weight_ties():
            text = dotted(target)
            if text is None:
                continue
            for holder in _prefixes(text):
                self.tie_lines.setdefault((id(ctx.scope), "root", holder), []).append(target.lineno)
            self.tie_lines.setdefault((id(ctx.scope), "text", text), []).append(target.lineno)
        self.call_lines: dict = {}  # (scope id, "tie", root) / (scope id, "method", root, attr) -> lines
        for call, ctx in model.calls:
            f = call.func
            sid = id(ctx.scope)
            holders = set()
            if type(f) is ast.Attribute:
                receiver = dotted(f.value)
                if receiver is not None:
                    holders.update(_prefixes(receiver))
                    for holder in _prefixes(receiver):
                        self.call_lines.setdefault((sid, "method", holder, f.attr), []).append(call.lineno)
            if _tie_call(call, None):
                for arg in map(dotted, call.args):
                    if arg is not None:
                        holders.update(_prefixes(arg))
                for holder in holders:
                    self.call_lines.setdefault((sid, "tie", holder), []).append(call.lineno)
        for table in (self.tie_lines, self.call_lines):
            for lines in table.values():
                lines.sort()
        # the same keys by class hierarchy instead of scope: `self.model` tied in any method
        self.anywhere = set()
        for target, _, ctx in model.weight_ties():
            text = dotted(target)
            if text is not None:
                self.anywhere.update((_hierarchy(model, ctx), "root", h) for h in _prefixes(text))
        for call, ctx in model.calls:
            f = call.func
            if type(f) is ast.Attribute and (receiver := dotted(f.value)) is not None:
                comp = _hierarchy(model, ctx)
                self.anywhere.update((comp, "method", h, f.attr) for h in _prefixes(receiver))
                if _tie_call(call, None):
                    self.anywhere.update((comp, "tie", h) for h in _prefixes(receiver))
            if _tie_call(call, None):
                comp = _hierarchy(model, ctx)
                for arg in map(dotted, call.args):
                    if arg is not None:
                        self.anywhere.update((comp, "tie", h) for h in _prefixes(arg))
        for recs in self.moves_by_root.values():
            recs.sort(key=lambda r: r[0])
        self._bound: dict | None = None

    def first_xla_move(self, ctx, root, after):
        recs = self.moves_by_root.get((id(ctx.scope), root), [])
        i = bisect.bisect_right(recs, after, key=lambda r: r[0])
        return (recs[i][1], recs[i][2]) if i < len(recs) else None

    def tied_after(self, ctx, root, line, text) -> bool:
        """``root`` tied again after ``line`` in ``ctx``'s scope: the same tie assignment
        (``text``; any tie under ``root`` when None) or ``root.tie_weights()`` /
        ``set_shared_parameters(root, ...)``."""
        sid = id(ctx.scope)
        key = (sid, "text", text) if text is not None else (sid, "root", root)
        return _after(self.tie_lines.get(key, ()), line) or _after(self.call_lines.get((sid, "tie", root), ()), line)

    def tied_anywhere(self, ctx, holder, tie_methods) -> bool:
        """``holder`` (``self.model``) tied, or one of ``tie_methods`` called on it, in any
        method of the class hierarchy of ``ctx``'s method."""
        comp = _hierarchy(self.model, ctx)
        return ((comp, "tie", holder) in self.anywhere or (comp, "root", holder) in self.anywhere
                or any((comp, "method", holder, m.name) in self.anywhere for m in tie_methods))

    def method_called_after(self, ctx, root, method, line) -> bool:
        return _after(self.call_lines.get((id(ctx.scope), "method", root, method.name), ()), line)

    def tie_methods(self, cls):
        """The methods of ``cls`` (and its bases in this file) that tie weights."""
        tying = {id(c.func) for _, _, c in self.model.weight_ties() if c.func is not None}
        return [m for c in self.model.mro(cls) for m in c.methods.values() if id(m) in tying]

    def bound_name(self, call) -> str | None:
        """The name a call's result is assigned to (``model = Net().to(dev)``)."""
        if self._bound is None:
            self._bound = {}
            scopes = [self.model.module_scope] + [f.scope for f in self.model.functions if f.scope is not None]
            for scope in scopes:
                for name, entries in scope.bindings.items():
                    for _, kind, target, _ in entries:
                        if kind == "value":
                            self._bound.setdefault(id(target), name)
            for target, value, ctx in self.model.attr_stores:  # self.model = Net().to(dev)
                func = ctx.func
                text = dotted(target)
                if text is not None and text.count(".") == 1 and func is not None and func.cls is not None \
                        and func.params and text.split(".")[0] == func.params[0]:
                    self._bound.setdefault(id(value), text)
        return self._bound.get(id(call))


def _hierarchy(model, ctx):
    """The class hierarchy of the method ``ctx`` is in (attributes.py), or its scope's id."""
    func = ctx.func
    return model._class_component(func.cls) if func is not None and func.cls is not None else id(ctx.scope)


def _prefixes(text: str) -> list[str]:
    """``a``, ``a.b``, ``a.b.c`` for ``a.b.c``."""
    parts = text.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _after(lines, line) -> bool:
    """Some line of the sorted ``lines`` comes after ``line``."""
    return bool(lines) and lines[-1] > line


def _under(text: str | None, name: str) -> bool:
    return text is not None and (text == name or text.startswith(name + "."))


def _root_name(expr) -> str | None:
    node = expr
    while type(node) in (ast.Attribute, ast.Subscript):
        node = node.value
    return node.id if type(node) is ast.Name else None


_INTROSPECTION = frozenset({"data_ptr", "storage", "untyped_storage", "stride"})

#: transformers constructors that tie the input and output embeddings inside the library
_HF_LOADERS = frozenset({"from_pretrained", "from_config"})
#: model classes with an output embedding the library ties to the input one
#: (`PreTrainedModel.tie_weights`; `tie_word_embeddings` defaults to True in `PretrainedConfig`)
_HF_TIED_HEAD = re.compile(r"(LMHead|ForCausalLM|ForMaskedLM|ForConditionalGeneration|ForPreTraining|WithLMHead)")
#: checkpoint families whose configs do not tie (Llama 2 / 3 / 3.1, Mistral, Mixtral)
_HF_UNTIED_CHECKPOINTS = re.compile(r"(?i)(llama-2|meta-llama-3-|llama-3\.1|mistral|mixtral)")


def _hf_tied_head(model, call, ctx) -> bool:
    """``Cls.from_pretrained(...)`` / ``Cls.from_config(...)`` of a transformers class with
    a tied LM head, not given ``tie_word_embeddings=False`` nor a checkpoint of a family
    that does not tie."""
    q = model.call_name(call, ctx)
    if q is None or not q.startswith("transformers.") or not _HF_TIED_HEAD.search(q.rsplit(".", 2)[-2]):
        return False
    for kw in call.keywords:
        if kw.arg == "tie_word_embeddings" and not (type(kw.value) is ast.Constant and kw.value.value is True):
            return False
        if kw.arg is None:
            return False  # **kwargs may untie
    first = call.args[0] if call.args else model.kwarg(call, "pretrained_model_name_or_path")
    text = model.const(first, ctx) if isinstance(first, ast.AST) else None
    return not (isinstance(text, str) and _HF_UNTIED_CHECKPOINTS.search(text))


def _untied_by_config(model) -> bool:
    """The module sets ``tie_word_embeddings`` to something other than True in a config
    (``AutoConfig.from_pretrained(..., tie_word_embeddings=False)``, ``config.tie_word_embeddings = False``):
    which models use that config is not followed, so every one counts as untied."""
    for call, ctx in model.kw_calls.get("tie_word_embeddings", ()):
        if "Config" not in (model.call_name(call, ctx) or "Config"):
            continue  # a model's own keyword is read at its load (_hf_tied_head)
        for kw in call.keywords:
            if kw.arg == "tie_word_embeddings" and not (type(kw.value) is ast.Constant and kw.value.value is True):
                return True
    return any(type(t) is ast.Attribute and t.attr == "tie_word_embeddings" and not (
        type(v) is ast.Constant and v.value is True) for t, v, _ in model.attr_stores)


@rule
class XlaTensorStorageIntrospection(Rule):
    """## What it does
    Flags `.data_ptr()`, `.storage()`, `.untyped_storage()` and `.stride()` called on a
    tensor that lives on the XLA device (a model output, a device-loader batch, a tensor
    created with `device=torch_xla.device()` or moved with `.to(<XLA device>)`, and what is
    computed from them; a parameter of a module moved to the XLA device before the call:
    `model.fc.weight`, `p` of `for p in model.parameters()` / `named_parameters()` or a
    comprehension over them) in XLA code. Measured on 2.9 (CPU): `data_ptr()` is 0 for
    every XLA tensor (two different tensors compare equal), `untyped_storage()` returns a
    placeholder whose `data_ptr()` raises `RuntimeError`, and `x.t().stride()` of a 4x4
    tensor reads `(4, 1)` (`(1, 4)` on the CPU).

    ## Why is this bad?
    XLA tensors have no host memory: their data pointer is 0, their storage is a
    placeholder whose data pointer raises (`RuntimeError`), and their strides always
    describe a contiguous layout, whatever views the program took. Code that compares data
    pointers to find shared tensors, or branches on strides, breaks or silently decides
    wrong on XLA.

    ## Known problems
    CPU tensors and tensors whose device cannot be seen are not reported, nor the strides
    of a tensor a factory just created (`torch.empty(..., device="xla")`, `empty_like` of
    one): it is contiguous on every device, so its strides are right (Triton call
    arguments).

    ## Example
    ```python
    out = model(batch)
    if out.stride(-1) != 1:
        out = out.contiguous()
    ```

    ## Use instead
    ```python
    out = model(batch)   # XLA tensors are always contiguous: no check needed
    ```

    ## References
    - torch_xla `docs/source/learn/troubleshoot.md` "XLA Tensor Quirks" 1 ("XLA tensors
      always appear to be contiguous and without storage. Networks should not try to check
      the strides of XLA tensors.")
    - torch_xla `torch_xla/csrc/tensor_impl.cpp` (`is_contiguous_custom` is always true;
      strides computed from the shape); pytorch/xla#4131 ("XLA tensors do not have storage")
    - Applies to every torch_xla release.
    """

    code = "XLA904"
    reported_at = 'the `.data_ptr()` / `.storage()` / `.untyped_storage()` / `.stride()` call'
    name = "xla-tensor-storage-introspection"
    message = ".data_ptr() of an XLA tensor: it has no host storage"
    fix = "drop it or use a .cpu() copy"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch\nimport torch_xla\n"
        "x = torch.randn(4, 4, device=torch_xla.device())\np = x.data_ptr()\n",
    ]
    good = [
        "import torch\nimport torch_xla\n"
        "x = torch.randn(4, 4)\np = x.data_ptr()\ns = x.stride()\n",
    ]

    def check(self, model):
        for call, ctx in model.method_calls(*_INTROSPECTION):
            f = call.func
            if model.call_name(call, ctx) is not None:
                continue
            if not model.in_xla_code(ctx) or not _on_xla(model, f.value, ctx):
                continue
            if f.attr == "stride":
                if _fresh_contiguous(model, f.value, ctx):
                    continue  # a new tensor is contiguous on every device: its strides read true
                yield self.finding(call, ".stride() of an XLA tensor always reads contiguous",
                                   "do not branch on XLA strides")
            else:
                yield self.finding(call, f".{f.attr}() of an XLA tensor: it has no host storage")


def _on_xla(model, expr, ctx, depth: int = 0) -> bool:
    """A tensor visibly on the XLA device: moved there, created there, or a device value
    of the model (see ``tensor_kind``) that is not the output of a module still on the CPU."""
    if depth > 8:
        return False
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in ("to", "xla") \
            and model.call_name(expr, ctx) is None:
        return model.move_target(expr, ctx) == "xla"
    if model.tensor_kind(expr, ctx) == "device":
        return not _cpu_model_output(model, expr, ctx)
    if _moved_module_param(model, expr, ctx):
        return True
    if type(expr) is ast.Name:
        values = model.values(expr, ctx)
        return bool(values) and all(c is not None and _on_xla(model, v, c, depth + 1) for v, c in values)
    return False


def _moved_to_xla_before(model, module: ast.AST, ctx, line: int) -> bool:
    """The module ``module`` names (``model``, ``self.net``) was moved to the XLA device
    (``.to(device)``, ``.xla()``) in ``ctx``'s scope before ``line``, and its root name
    still holds the moved binding there."""
    text = dotted(module)
    if text is None:
        return False
    if type(module) is ast.Name:  # model = Net().to(device)
        values = model.values(module, ctx)
        if values and all(c is not None and type(v) is ast.Call and model.move_target(v, c) == "xla"
                          for v, c in values):
            return True
    root = text.split(".", 1)[0]
    for move_line, call, mctx in model.moves(text, ctx):
        if move_line < line and dotted(call.func.value) is not None and _covers(dotted(call.func.value), text) \
                and model.move_target(call, mctx) == "xla" \
                and model.lookup(root, ctx, line) == model.lookup(root, mctx, move_line):
            return True
    return False


def _covers(moved: str, text: str) -> bool:
    """Moving ``moved`` moves ``text``: the same chain or one above it."""
    return text == moved or text.startswith(moved + ".")


def _moved_module_param(model, expr, ctx) -> bool:
    """A parameter of a module moved to the XLA device: ``model.fc.weight`` /
    ``model.bias`` after ``model.to(device)``, or ``p`` of ``for p in model.parameters()``
    (``for name, p in model.named_parameters()``, a comprehension over them) after it."""
    t = type(expr)
    if t is ast.Attribute and expr.attr in _PARAM_NAMES:
        return _moved_to_xla_before(model, expr.value, ctx, expr.lineno)
    if t is not ast.Name:
        return False
    found = model.loop_source(expr, ctx)
    if found is None:
        return False
    target, it, where = found
    if type(it) is not ast.Call or type(it.func) is not ast.Attribute or it.args or it.keywords:
        return False
    method = it.func.attr
    if method == "parameters":
        hit = target is not None and type(target) is ast.Name
    elif method == "named_parameters":
        hit = type(target) is ast.Tuple and len(target.elts) == 2 and type(target.elts[1]) is ast.Name \
            and target.elts[1].id == expr.id
    else:
        hit = False
    if hit:
        return _moved_to_xla_before(model, it.func.value, where, it.lineno)
    return False


#: factories whose tensor is laid out contiguously (``torch.from_numpy`` keeps numpy's strides)
_CONTIGUOUS_FACTORIES = frozenset("torch." + n for n in (
    "randn", "rand", "randint", "randperm", "zeros", "ones", "empty", "full", "arange", "linspace",
    "logspace", "eye", "tensor", "normal"))
_LIKE_FACTORIES = frozenset("torch." + n for n in (
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like"))


def _fresh_contiguous(model, expr, ctx, depth: int = 0) -> bool:
    """``expr`` is a tensor a factory just created (``torch.empty(..., device="xla")``,
    ``torch.arange(n).to("xla")``, ``torch.empty_like(q)`` of such), through names: its
    layout is contiguous on every device, so its strides are the same on XLA and CUDA."""
    if depth > 6:
        return False
    t = type(expr)
    if t is ast.Name:
        values = model.values(expr, ctx)
        return bool(values) and all(c is not None and _fresh_contiguous(model, v, c, depth + 1) for v, c in values)
    if t is not ast.Call:
        return False
    q = model.call_name(expr, ctx)
    if q in _CONTIGUOUS_FACTORIES:
        return True
    if q in _LIKE_FACTORIES:
        return bool(expr.args) and _fresh_contiguous(model, expr.args[0], ctx, depth + 1)
    f = expr.func
    if q is None and type(f) is ast.Attribute and f.attr == "to":
        return _fresh_contiguous(model, f.value, ctx, depth + 1)
    return False


def _cpu_model_output(model, expr, ctx) -> bool:
    """``expr`` is computed from the output of a module built on the CPU and not moved
    (``cpu_model(x)``, through names, tensor methods, attributes and indexing)."""
    for _ in range(12):
        t = type(expr)
        if t in (ast.Attribute, ast.Subscript):
            expr = expr.value
            continue
        if t is ast.Name:
            single = model.single_value(expr, ctx)
            if single is None:
                return False
            expr, ctx = single
            continue
        if t is not ast.Call:
            return False
        f = expr.func
        name = dotted(f)
        if name is not None and model.qualname(f, ctx) is None and model.is_model(f, ctx):
            return model.host_module(name, ctx, expr.lineno) is not None
        if type(f) is ast.Attribute and model.call_name(expr, ctx) is None:
            expr = f.value
            continue
        return False
    return False


_PARAM_ITERATORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})


@rule
class ShardingAnnotationOnCpuTensor(Rule):
    """## What it does
    Flags `xs.mark_sharding(t, mesh, spec)` (also `mark_sharding_with_gradients`, every
    import spelling) where `t` is a parameter of a module that is still on the CPU at that
    point of the function (`model.fc.weight`, `model.layers[0].weight`, a parameter of a
    `for p in model.parameters():` loop, `self.fc.weight` in `__init__`): the module was
    built there by a constructor and nothing moved it (`.to(device)`, `device=`, a helper
    it was handed to) before the call. Also a tensor visibly created on the CPU
    (`torch.randn(8, 4)` without `device=`).

    ## Why is this bad?
    `mark_sharding` annotates the XLA tensor behind `t`; a CPU tensor has none, so it raises
    `RuntimeError: Input tensor is not an XLA tensor` (torch_xla 2.0-2.8) / `Expected XLA
    tensor` (2.9). Moving the module afterwards would also replace the parameters with new
    ones, dropping any annotation.

    A layer a module class of the file builds on the device in its own `__init__`
    (`self.fc = nn.Linear(4, 4, device=dev)`, a device passed in, `self.to(device)`) is on
    the device already: sharding its weights is fine.

    ## Known problems
    A module that arrives as a parameter, or was handed to a helper before the call, is
    taken as possibly moved (not reported). For such a parameter, a layer its class builds
    on the device is not told apart from one built on the host.

    ## Example
    ```python
    model = MyModel()
    xs.mark_sharding(model.fc1.weight, mesh, ("data", None))
    model.to(torch_xla.device())
    ```

    ## Use instead
    ```python
    model = MyModel().to(torch_xla.device())
    xs.mark_sharding(model.fc1.weight, mesh, ("data", None))
    ```

    ## References
    - torch_xla `torch_xla/distributed/spmd/xla_sharding.py` `mark_sharding` (the docstring
      example moves the layer first: `nn.Linear(32, 10).to('xla')`);
      `torch_xla/csrc/xla_sharding_util.cpp` `XlaMarkSharding` (`bridge::GetXlaTensor`)
    - torch_xla `torch_xla/csrc/aten_xla_bridge.cpp` `GetXlaTensor` (the error text per release)
    - torch_xla `docs/source/perf/spmd_basic.md` (tensors moved with `.to('xla')` before
      `mark_sharding`)
    - Applies to torch_xla 2.0-2.9 (`torch_xla.experimental.xla_sharding` until 2.4,
      `torch_xla.distributed.spmd` from 2.2).
    """

    code = "XLA905"
    reported_at = 'the `xs.mark_sharding(...)` call'
    name = "sharding-annotation-on-cpu-tensor"
    message = "xs.mark_sharding on a CPU parameter (RuntimeError)"
    fix = "move the module to the XLA device first"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch\nimport torch_xla\nimport torch_xla.distributed.spmd as xs\n"
        "def f(mesh):\n    model = torch.nn.Linear(4, 4)\n"
        "    xs.mark_sharding(model.weight, mesh, ('data', None))\n"
        "    return model.to(torch_xla.device())\n",
    ]
    good = [
        "import torch\nimport torch_xla\nimport torch_xla.distributed.spmd as xs\n"
        "def f(mesh):\n    model = torch.nn.Linear(4, 4).to(torch_xla.device())\n"
        "    xs.mark_sharding(model.weight, mesh, ('data', None))\n    return model\n",
    ]

    def check(self, model):
        loops_at = None
        annotations = [q for q in model.call_index() if q.startswith(SPMD_PACKAGES)
                       and q.rsplit(".", 1)[-1] in ("mark_sharding", "mark_sharding_with_gradients")]
        for call, ctx in model.calls_to(*annotations) if annotations else ():
            q = model.call_name(call, ctx)
            if not model.in_xla_code(ctx) or model.default_device_set():
                continue
            t = model.kwarg(call, "t", 0)
            if not isinstance(t, ast.AST):
                continue
            shown = short_name(q)
            if loops_at is None:
                loops_at = {}
                for loop in model.loops:
                    if type(loop.node) in (ast.For, ast.AsyncFor):
                        loops_at.setdefault((id(loop.ctx.scope), loop.node.lineno), []).append(loop)
            holder, part = self._holder(model, t, ctx, loops_at)
            if holder is not None and "." not in holder:  # blk = model.blocks[0]; for blk in model.blocks:
                root = model.module_alias_root(holder, ctx, call.lineno)
                holder, part = root, (part if root == holder else None)
            if holder is not None and model.host_module(holder, ctx, call.lineno) is not None \
                    and (part is None or not model.host_part_placed(holder, part, ctx, call.lineno)):
                yield self.finding(call, f"{shown} on a CPU parameter of {holder} (RuntimeError)",
                                   f"call {holder}.to({device_call(self.settings)}) first")
            elif holder is None and model.cpu_tensor(t, ctx):
                yield self.finding(call, f"{shown} on a CPU tensor (RuntimeError)",
                                   f"create it on the XLA device, or .to({device_call(self.settings)}) first")

    @staticmethod
    def _holder(model, t, ctx, loops_at) -> tuple[str | None, str | None]:
        """The module whose parameter ``t`` is, and the attribute of it the parameter lies
        under (None for the whole module): ``(model, fc)`` for ``model.fc.weight``,
        ``(self.fc, None)`` for ``self.fc.weight`` in a method, ``(model, None)`` for the
        module a ``for p in model.parameters():`` loop walks; ``(None, None)`` when unknown."""
        if type(t) in (ast.Attribute, ast.Subscript):
            chain = []
            node = t
            while type(node) in (ast.Attribute, ast.Subscript):
                chain.append(node)
                node = node.value
            if type(node) is not ast.Name or not any(type(n) is ast.Attribute for n in chain):
                return None, None
            func = ctx.func
            if func is not None and func.cls is not None and func.params and node.id == func.params[0]:
                first = chain[-1]
                if type(first) is not ast.Attribute or len(chain) < 2:
                    return None, None
                part = chain[-2].attr if len(chain) >= 3 and type(chain[-2]) is ast.Attribute else None
                return f"{node.id}.{first.attr}", part
            first = chain[-1]
            part = first.attr if len(chain) >= 2 and type(first) is ast.Attribute else None
            return node.id, part
        if type(t) is not ast.Name:
            return None, None
        bindings = model.lookup(t.id, ctx, t.lineno)
        if not bindings or len(bindings) != 1 or bindings[0][1] != "unknown":
            return None, None
        line = bindings[0][0]
        for loop in loops_at.get((id(ctx.scope), line), ()):
            node = loop.node
            it = node.iter
            if type(it) is ast.Call and type(it.func) is ast.Attribute and it.func.attr in _PARAM_ITERATORS:
                text = dotted(it.func.value)
                if text is None:
                    return None, None
                func = ctx.func
                parts = text.split(".")
                if func is not None and func.cls is not None and func.params and parts[0] == func.params[0]:
                    if len(parts) < 2:
                        return None, None
                    return ".".join(parts[:2]), (parts[2] if len(parts) >= 3 else None)
                return parts[0], (parts[1] if len(parts) >= 2 else None)
        return None, None

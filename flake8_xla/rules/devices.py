"""XLA4: devices."""

from __future__ import annotations

import ast
import sys

from ..model import UNKNOWN
from ..model.replicas import is_rank_value
from ..model.runtime import device_leaves, is_cuda_string, str_value
from ..model.scopes import _is_main_guard
from ..registry import UNIMPORTED, Rule, rule
from ._common import at_least, device_call, source_text

CUDA_CALLS = {
    "torch.cuda.set_device": "drop it",
    "torch.cuda.device": "drop it",  # `with torch.cuda.device(i):`
    "torch.cuda.current_device": "use {dev}",
    "torch.cuda.synchronize": None,  # version-dependent, see _sync_fix
    "torch.cuda.empty_cache": "drop it",
}
#: calls whose finding is dropped when it lies inside another: the outer fix rewrites it
#: (`torch.device("cuda", torch.cuda.current_device())`, `.to(torch.cuda.current_device())`)
INNER_CALLS = frozenset({"torch.cuda.current_device"})
#: DDP's CUDA-only arguments: XLA102 says to drop them, and what they hold with them
DDP_DEVICE_ARGS = frozenset({"device_ids", "output_device"})


def _sync_fix(settings):
    if at_least(settings, "2.5"):
        return "use torch_xla.sync(wait=True)"
    return "use xm.wait_device_ops()"


@rule
class CudaDeviceInXlaCode(Rule):
    """## What it does
    Flags CUDA placement in XLA code: `.cuda()`, `torch.device("cuda...")`,
    `device="cuda..."` (tensor factories `torch.zeros/ones/empty/randn/full/arange/tensor`
    and any other call), `.to("cuda...")` (strings, f-strings and `"cuda" if ... else ...`),
    `torch.load(..., map_location="cuda...")` (or a dict mapping storages to CUDA),
    `torch.set_default_device("cuda")`, `with torch.cuda.device(i):`, and
    `torch.cuda.current_device`, `set_device`, `synchronize`, `empty_cache`.

    ## Why is this bad?
    A TPU host has no CUDA: the call raises (`Found no NVIDIA driver`), or the
    `"cuda" if torch.cuda.is_available() else "cpu"` idiom silently trains on the CPU.
    The XLA spellings: each process sees its own chip as `xla:0` (`torch_xla.device()`),
    so `torch.cuda.set_device` / `with torch.cuda.device(i):` have nothing to do; the XLA
    runtime manages device memory (no `empty_cache`); `torch_xla.sync(wait=True)`
    (`xm.wait_device_ops()` before 2.5) waits for the device as `torch.cuda.synchronize()` does;
    `torch.set_default_device("cuda")` goes, and tensors are created with
    `device=torch_xla.device()`.

    ## Known problems
    Not reported in branches that run only without XLA (the `else` of an XLA test, also of
    a test that a variable only torch_xla or a TPU host sets is set: `"PJRT_DEVICE" in
    os.environ`, `os.getenv("COLAB_TPU_ADDR")`; code after `if on_tpu: ... return`, the body
    of `if torch.cuda.is_available():`), nor
    `torch.cuda.is_available()` used as a test. `map_location="cpu"`, a callable, a dict
    mapping CUDA storages to the CPU and `"cuda" if torch.cuda.is_available() else "cpu"`
    (the CPU on a TPU host) load fine. `torch.cuda.current_device()` inside another finding
    (`torch.device("cuda", torch.cuda.current_device())`) or inside DDP's `device_ids=`
    (XLA102 drops the argument) is not reported on its own. An integer device
    (`device=rank`) is XLA402.

    ## Example
    ```python
    state = torch.load(path, map_location="cuda")
    model = model.cuda()
    x = torch.zeros(2, 4, device="cuda")
    torch.cuda.synchronize()
    ```

    ## Use instead
    ```python
    device = torch_xla.device()
    state = torch.load(path, map_location="cpu")
    model = model.to(device)
    x = torch.zeros(2, 4, device=device)
    torch_xla.sync(wait=True)
    ```

    ## References
    - torch_xla `docs/source/learn/xla-examples.md` ("Replace `cuda` with `torch_xla.device()`")
    - torch_xla `docs/source/learn/trace-vs-execution-time.md` (`torch_xla.sync(wait=True)`)
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` "Saving and Loading XLA Tensors"
      (`torch.load` the CPU copy, then `.to(device)`)
    - Applies to torch_xla 2.0-2.9 (`torch_xla.device()` since 2.3).
    """

    code = "XLA401"
    name = "cuda-device-in-xla-code"
    message = "CUDA device in XLA code"
    fix = "use torch_xla.device()"
    severity = "E"
    versions = "2.0+"
    reported_at = ('the CUDA call (`.cuda()`, `torch.device("cuda")`, `torch.cuda.synchronize()`), or the `"cuda"` '
                   'value of a `device=` / `map_location=` argument')
    fix_applicability = "safe"
    bad = [
        "import torch\nimport torch_xla\n"
        "def f(model):\n    model.cuda()\n    return torch.zeros(2, device='cuda:0')\n",
        "import torch\nimport torch_xla\ntorch.cuda.synchronize()\n",
        "import torch\nimport torch_xla\n"
        "def restore(path):\n    return torch.load(path, map_location='cuda:0')\n",
    ]
    good = [
        "import torch\nimport torch_xla\n"
        "def f(model):\n"
        "    if torch.cuda.is_available():\n        return model.cuda()\n"
        "    return model.to(torch_xla.device())\n",
        "import torch\ndef f(model):\n    return model.cuda()  # no torch_xla: not XLA code\n",
        "import torch\nimport torch_xla\n"
        "def restore(path):\n    return torch.load(path, map_location='cpu')\n",
    ]

    def check(self, model):
        found = list(self._findings(model))
        outer = [f for f, inner in found if not inner]
        skip = _under_ddp_device_args(model) if any(inner for _, inner in found) else set()
        in_tests = model.calls_in_tests() if any(inner for _, inner in found) else set()
        for f, inner in found:
            if inner and (inner in skip or inner in in_tests or any(g is not f and _covers(g, f) for g in outer)):
                continue  # a query covered by another finding, under DDP's device args, or only tested
            yield f

    def _findings(self, model):
        """Findings with, for a call of ``INNER_CALLS``, the id of that call (else 0)."""
        dev = device_call(self.settings)
        for call, ctx in _unique(model.method_calls("cuda", "to"), model.keyword_calls("device"),
                                 model.calls_to(*CUDA_CALLS, "torch.device", "torch.set_default_device",
                                                "torch.load")):
            func = call.func
            if type(func) is ast.Attribute and func.attr == "cuda" and model.call_name(call, ctx) is None:
                if model.in_xla_code(ctx):
                    yield self.finding(call, ".cuda() in XLA code", f"use .to({dev})"), 0
                continue
            q = model.call_name(call, ctx)
            if q in CUDA_CALLS:
                if model.in_xla_code(ctx):
                    fix = (CUDA_CALLS[q] or _sync_fix(self.settings)).format(dev=dev)
                    yield self.finding(call, f"{q}() in XLA code", fix), id(call) if q in INNER_CALLS else 0
                continue
            if q == "torch.device" and is_cuda_string(model, model.kwarg(call, "type", 0), ctx):
                if model.in_xla_code(ctx):
                    yield self.finding(call, 'torch.device("cuda") in XLA code', f"use {dev}"), 0
                continue
            if q == "torch.set_default_device" and is_cuda_string(model, model.kwarg(call, "device", 0), ctx):
                if model.in_xla_code(ctx):
                    yield self.finding(call, 'torch.set_default_device("cuda") in XLA code',
                                       f"drop it, create tensors with device={dev}"), 0
                continue
            if q == "torch.load":
                for node in _cuda_map_locations(model, model.kwarg(call, "map_location", 1), ctx):
                    if model.in_xla_code(ctx):
                        yield self.finding(node, 'torch.load(map_location="cuda") in XLA code',
                                           f'use map_location="cpu", then .to({dev})'), 0
                continue
            if type(func) is ast.Attribute and func.attr == "to" and call.args \
                    and is_cuda_string(model, call.args[0], ctx):
                if model.in_xla_code(ctx):
                    yield self.finding(call, '.to("cuda") in XLA code', f"use .to({dev})"), 0
                continue
            for kw in call.keywords:
                if kw.arg == "device" and is_cuda_string(model, kw.value, ctx):
                    if model.in_xla_code(ctx):
                        yield self.finding(kw.value, 'device="cuda" in XLA code', f"use device={dev}"), 0
                    break


def _unique(*records):
    """The ``(call, ctx)`` records of several lists, each call once: the calls spelled the
    way a rule reports (``model.method_calls``, ``keyword_calls``, ``calls_to``); every
    other call is never reported, so it is not looked at."""
    seen: set[int] = set()
    for recs in records:
        for rec in recs:
            if id(rec[0]) not in seen:
                seen.add(id(rec[0]))
                yield rec


def _covers(outer, inner) -> bool:
    return outer.end is not None and (outer.line, outer.col) <= (inner.line, inner.col) <= outer.end


def _under_ddp_device_args(model) -> set[int]:
    """Ids of the calls inside ``device_ids=`` / ``output_device=`` arguments."""
    out = set()
    for call, _ in model.keyword_calls(*DDP_DEVICE_ARGS):
        for kw in call.keywords:
            if kw.arg in DDP_DEVICE_ARGS:
                out.update(id(n) for n in ast.walk(kw.value) if type(n) is ast.Call)
    return out


def _cuda_map_locations(model, expr, ctx) -> list:
    """The parts of a ``torch.load`` ``map_location`` that send storages to CUDA: the whole
    value when it is always a CUDA string (``"cuda"``, ``f"cuda:{rank}"``), the CUDA values
    of a dict (``{"cpu": "cuda:0"}``; ``{"cuda:0": "cpu"}`` maps *away* from CUDA and is
    fine). ``torch.device("cuda")`` is reported as such; callables, ``"cpu"`` and
    ``"cuda" if torch.cuda.is_available() else "cpu"`` (the CPU on a TPU host) are not."""
    if expr is None or expr is UNKNOWN:
        return []
    if _always_cuda(model, expr, ctx):
        return [expr]
    node, nctx = expr, ctx
    if type(node) is ast.Name:
        values = model.values(node, ctx)
        if not values or len(values) != 1:
            return []
        node, nctx = values[0]
    if type(node) is not ast.Dict:
        return []
    cuda = [v for k, v in zip(node.keys, node.values) if k is not None and _always_cuda(model, v, nctx)]
    return cuda if node is expr else cuda[:1] and [expr]  # through a name: once, at the argument


def _always_cuda(model, expr, ctx) -> bool:
    leaves = device_leaves(model, expr, ctx)
    if not leaves:
        return False
    for e, c in leaves:
        text = str_value(model, e, c)
        if text is None or not (text == "cuda" or text.startswith("cuda:")):
            return False
    return True


XLA_DEVICE_APIS = ("torch_xla.device", "torch_xla.core.xla_model.xla_device")


@rule
class RankIndexedDevice(Rule):
    """## What it does
    Flags a device chosen by the process rank in XLA code: `.to(rank)` / `.to(0)` /
    `.to(device=rank)` (an integer is a CUDA index), `device=rank` on torch's own calls
    (`torch.zeros(..., device=rank)` and the other tensor factories, `nn.Linear(...,
    device=rank)`), `torch.device(rank)`, `xm.xla_device(rank)`, `torch_xla.device(rank)`,
    `torch.device("xla", rank)` and `f"xla:{rank}"`; in code started by the XLA launcher
    also any explicit index other than 0. A rank is the launched function's first parameter,
    a rank API (`xr.global_ordinal()`, `dist.get_rank()`, `LOCAL_RANK`), or a value computed
    from one by integer arithmetic (`index + 1`, `n = index - 1`, `index % 8`, `rank // 4`).

    ## Why is this bad?
    Each PJRT process sees only its own chip, as `xla:0`. An integer given to `.to()` is
    a CUDA device (`Found no NVIDIA driver`); `torch_xla.device(rank)` raises `IndexError`
    or silently switches a thread's default device on TPU v2/v3.

    ## Known problems
    `torch_xla.device(i)` over `torch_xla.devices()` in a single process (addressing its
    local devices on purpose) is not reported, nor the rank used as data (`batch[index + 1]`,
    samplers, logging), nor `device=rank` given to the script's own functions (what they
    do with it is unknown). On `xm.xla_device(rank)` this finding replaces XLA804: one fix.

    ## Example
    ```python
    def _mp_fn(index):
        model = model.to(index)
        device = xm.xla_device(index + 1)
        mask = torch.ones(8, device=index)
    ```

    ## Use instead
    ```python
    def _mp_fn(index):
        device = torch_xla.device()
        model = model.to(device)
        mask = torch.ones(8, device=device)
    ```

    ## References
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` ("you will see `xla:0` on all devices")
    - torch_xla `torch_xla/torch_xla.py` `device(index)` (2.3+); `torch_xla/core/xla_model.py`
      `xla_device(n)`; `torch_xla/_internal/pjrt.py` `_SpawnFn` (passes the global ordinal as
      the first argument)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA402"
    name = "rank-indexed-device"
    message = "device indexed by the process rank in XLA code"
    fix = "use torch_xla.device()"
    severity = "E"
    versions = "2.0+"
    reported_at = ('the call that picks the device (`.to(rank)`, `torch_xla.device(rank)`, `torch.device("xla", rank)`), '
                   'the value of a `device=` argument, or the `f"xla:{rank}"` string')
    fix_applicability = "safe"
    supersedes = ("XLA804",)
    bad = [
        "import torch_xla\n"
        "def f(rank, model):\n    model.to(rank)\n    return torch_xla.device(rank)\n"
        "torch_xla.launch(f, args=(None,))\n",
        "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(index):\n    dev = xm.xla_device(index + 1)\n    return torch.ones(8, device=index)\n"
        "torch_xla.launch(f)\n",
    ]
    good = [
        "import torch_xla\n"
        "for i in range(len(torch_xla.devices())):\n    d = torch_xla.device(i)\n",
        "import torch_xla\n"
        "def f(rank, model):\n    return model.to(torch_xla.device())\n"
        "torch_xla.launch(f, args=(None,))\n",
        "import torch_xla\n"
        "def f(index, batch):\n    return batch[index + 1].to(torch_xla.device())\n"
        "torch_xla.launch(f, args=(None,))\n",
    ]

    def check(self, model):
        dev = device_call(self.settings)
        fix = f"use {dev}"
        to_fix = f"use .to({dev})"
        for call, ctx in _unique(model.method_calls("to"), model.keyword_calls("device"),
                                 model.calls_to("torch.device", *XLA_DEVICE_APIS)):
            func = call.func
            q = model.call_name(call, ctx)
            is_to = q is None and type(func) is ast.Attribute and func.attr == "to"
            if is_to and call.args and _int_device(model, call.args[0], ctx):
                if model.in_xla_code(ctx):
                    yield self.finding(call, f".to({source_text(call.args[0])}) in XLA code: an int is a CUDA index",
                                       to_fix)
                continue
            if q in XLA_DEVICE_APIS:
                arg = model.kwarg(call, "index" if q == "torch_xla.device" else "n", 0)
                if self._rank_index(model, arg, ctx) and model.in_xla_code(ctx):
                    name = q if q == "torch_xla.device" else "xm.xla_device"
                    yield self.finding(call, f"{name}({source_text(arg)}) picks a device by rank", fix)
                continue
            if q == "torch.device" and call.args:
                if len(call.args) > 1:
                    text = str_value(model, call.args[0], ctx)
                    if text == "xla" and self._rank_index(model, call.args[1], ctx) and model.in_xla_code(ctx):
                        yield self.finding(call, f'torch.device("xla", {source_text(call.args[1])}) picks a device '
                                                 "by rank", fix)
                    continue
                if _int_device(model, call.args[0], ctx):
                    if model.in_xla_code(ctx):
                        yield self.finding(call, f"torch.device({source_text(call.args[0])}) in XLA code: an int is "
                                                 "a CUDA index", fix)
                    continue
            # device=<int or rank> on .to() and on torch's own calls (tensor factories, ...)
            takes_device = is_to or (q is not None and q.startswith("torch.") and not q.startswith("torch.cuda."))
            for kw in call.keywords:
                if kw.arg == "device" and takes_device and _int_device(model, kw.value, ctx):
                    if model.in_xla_code(ctx):
                        yield self.finding(kw.value, f"device={source_text(kw.value)} in XLA code: an int is a CUDA "
                                                     "index", f"use device={dev}")
                    break
            else:
                for arg in _device_args(call, q):
                    if self._xla_string_with_rank(model, arg, ctx) and model.in_xla_code(ctx):
                        yield self.finding(arg, "xla:<rank> device string in XLA code", fix)

    def _rank_index(self, model, arg, ctx) -> bool:
        if arg is None or arg is UNKNOWN:
            return False
        if rank_derived(model, arg, ctx):
            return True
        value = model.const(arg, ctx)
        return type(value) is int and value != 0 and model.is_launched(ctx)

    def _xla_string_with_rank(self, model, arg, ctx) -> bool:
        if type(arg) in (ast.Name, ast.Attribute):
            values = model.resolve_values(arg, ctx)
            if values and len(values) == 1 and type(values[0][0]) in (ast.JoinedStr, ast.Constant):
                arg, ctx = values[0]
        if type(arg) is ast.JoinedStr:
            head = str_value(model, arg, ctx)
            if head is not None and head.startswith("xla:") and len(arg.values) >= 2:
                formatted = arg.values[1]
                return type(formatted) is ast.FormattedValue and (
                    is_rank_value(model, formatted.value, ctx) or model.is_launched(ctx))
            return False
        text = str_value(model, arg, ctx)
        if text is not None and text.startswith("xla:") and text[4:].isdigit() and text[4:] != "0":
            return model.is_launched(ctx)
        return False


#: arithmetic that keeps a value rank-dependent: ``index + 1``, ``rank - 1``, ``index % 8``,
#: ``rank // 4``, ``2 * rank``
RANK_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Mod, ast.FloorDiv)


def rank_derived(model, expr, ctx, _depth: int = 0) -> bool:
    """A process rank (see ``is_rank_value``) or a value computed from one by integer
    arithmetic, directly or through names: ``index + 1``, ``n = index - 1``, ``index % 8``."""
    if expr is None or expr is UNKNOWN or _depth > 8:
        return False
    if is_rank_value(model, expr, ctx):
        return True
    node = expr
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "int" and len(node.args) == 1 \
            and model.lookup("int", ctx, getattr(node, "lineno", None)) is None:
        node = node.args[0]
    t = type(node)
    if t is ast.BinOp:
        return type(node.op) in RANK_ARITH and (
            rank_derived(model, node.left, ctx, _depth + 1) or rank_derived(model, node.right, ctx, _depth + 1))
    if t is ast.Name and model.qualname(node, ctx) is None:
        values = model.values(node, ctx)
        return bool(values) and all(type(v) in (ast.BinOp, ast.Call, ast.Name, ast.Attribute) and rank_derived(model, v, vc, _depth + 1)
                                    for v, vc in values)
    return False


def _int_device(model, expr, ctx) -> bool:
    """An integer used as a device: a literal or constant int (``.to(0)``), or a rank-derived
    value (``.to(rank)``, ``.to(index % 8)``)."""
    if expr is None or expr is UNKNOWN:
        return False
    value = model.const(expr, ctx)
    if type(value) is int:
        return True
    return rank_derived(model, expr, ctx)


def _device_args(call, q):
    """Expressions that name a device: ``torch.device(x)``, ``.to(x)``, ``device=x``."""
    out = []
    if q == "torch.device" and call.args:
        out.append(call.args[0])
    elif q is None and type(call.func) is ast.Attribute and call.func.attr == "to" and call.args:
        out.append(call.args[0])
    for kw in call.keywords:
        if kw.arg == "device":
            out.append(kw.value)
    return out


#: dynamo backends torch_xla registers (2.1+ ``openxla``; 2.0 ``torchxla_trace_once`` and friends)
XLA_DYNAMO_BACKENDS = frozenset({
    "openxla", "openxla_eval", "openxla_eval_boxed", "torchxla_trace_once", "aot_torchxla_trace_once",
    "torchxla_trivial", "aot_torchxla_trivial",
})
#: the XLA dynamo backends the paired torch release registers, by the first torch_xla release
#: of each set (they live in torch's ``torch/_dynamo/backends/torchxla.py``, not in torch_xla):
#: 2.0 the ``torchxla_*`` names; 2.1 adds ``openxla`` / ``openxla_eval`` (pytorch#106489,
#: the old names kept as experimental backends); pytorch#122128 (merged 2024-03-19) dropped
#: the old names, absent from 2.4 on (2.3's branch may or may not hold it: kept there)
_OLD_XLA_BACKENDS = frozenset({"torchxla_trace_once", "aot_torchxla_trace_once", "torchxla_trivial",
                               "aot_torchxla_trivial"})
XLA_BACKENDS_BY_RELEASE = (
    ("2.0", _OLD_XLA_BACKENDS),
    ("2.1", _OLD_XLA_BACKENDS | {"openxla", "openxla_eval"}),
    ("2.4", frozenset({"openxla", "openxla_eval"})),
)


def xla_backends(settings) -> frozenset:
    """The XLA dynamo backend names registered with the target release (``--xla-version``;
    the newest set without one)."""
    found = XLA_BACKENDS_BY_RELEASE[0][1]
    for since, names in XLA_BACKENDS_BY_RELEASE:
        if at_least(settings, since):
            found = names
    return found


#: dynamo backends that compile for the CPU or CUDA (the default is ``inductor``); the
#: debugging backends (``eager``, ``aot_eager``) run the ops as they are and are left alone
NON_XLA_DYNAMO_BACKENDS = frozenset({
    "inductor", "cudagraphs", "tensorrt", "torch_tensorrt", "onnxrt", "tvm", "ipex", "aot_ts_nvfuser",
    "nvprims_nvfuser",
})


@rule
class TorchCompileDefaultBackend(Rule):
    """## What it does
    Flags `torch.compile(...)` (any import spelling, also the bare `@torch.compile`
    decorator) in XLA code with no `backend=` (the default is `inductor`) or with a backend
    that is not torch_xla's (`"inductor"`, `"cudagraphs"`, `"tensorrt"`, ...).

    ## Why is this bad?
    Inductor generates CPU/CUDA kernels: on XLA tensors the compiled function fails or
    falls back instead of being traced into one XLA graph. torch_xla registers its own
    dynamo backend, `openxla`.

    ## Known problems
    A backend that cannot be seen (`backend=backend`, `**kwargs`), a callable backend and
    the debugging backends (`eager`, `aot_eager`) are not reported; neither is
    `torch.compile` in branches that run only without XLA (`if torch.cuda.is_available():`)
    or in a module that does not import torch_xla. A CPU model compiled in an XLA module is
    reported too (the linter cannot tell which device a module lives on), and
    `nn.Module.compile()` is not followed. An XLA backend the target release does not
    register (`--xla-version`) is reported too: 2.0's `torchxla_trace_once`,
    `aot_torchxla_trace_once`, `torchxla_trivial` and `aot_torchxla_trivial` from 2.4 (torch
    raises `InvalidBackend`), `openxla` / `openxla_eval` before 2.1. The backends are
    registered by the paired torch release (`torch/_dynamo/backends/torchxla.py`), not by
    torch_xla; 2.3 is taken to keep the old names (pytorch#122128 was merged at its branch cut).

    ## Example
    ```python
    model = torch.compile(model.to(torch_xla.device()))
    ```

    ## Use instead
    ```python
    model = torch.compile(model.to(torch_xla.device()), backend="openxla")
    # for a training step, prefer: step_fn = torch_xla.compile(step_fn)
    ```

    ## References
    - torch_xla `docs/source/perf/dynamo.md` "Integration" ("adding the `backend='openxla'`
      argument to `torch.compile`")
    - torch_xla `docs/source/learn/eager.md` ("`torch_xla.compile` vs. `torch.compile`")
    - torch_xla 2.0 `docs/dynamo.md` (`backend='torchxla_trace_once'`, `aot_torchxla_trace_once`
      to train); `openxla` since 2.1
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA403"
    name = "torch-compile-default-backend"
    message = "torch.compile without an XLA backend in XLA code"
    fix = "pass backend='openxla'"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the `torch.compile(...)` call, or the `@torch.compile` decorator'
    bad = [
        "import torch\nimport torch_xla\n"
        "def build(model):\n    return torch.compile(model.to(torch_xla.device()))\n",
        "import torch\nimport torch_xla\n"
        "def build(model):\n    return torch.compile(model, backend='inductor')\n",
    ]
    good = [
        "import torch\nimport torch_xla\n"
        "def build(model):\n    return torch.compile(model.to(torch_xla.device()), backend='openxla')\n",
        "import torch\ndef build(model):\n    return torch.compile(model)  # no torch_xla: not XLA code\n",
    ]

    def check(self, model):
        if not (model.uses_torch_xla or model.in_project()):
            return  # (a module without torch_xla: only where the project's launched code reaches it)
        fix = self.fix if at_least(self.settings, "2.1") else "pass backend='torchxla_trace_once'"
        for call, ctx in model.calls_to("torch.compile"):
            backend = model.kwarg(call, "backend")
            if backend is None:
                if model.in_xla_code(ctx):
                    yield self.finding(call, "torch.compile without backend= uses inductor in XLA code", fix)
                continue
            if backend is UNKNOWN:
                continue
            name = model.const(backend, ctx)
            if isinstance(name, str) and name in NON_XLA_DYNAMO_BACKENDS and model.in_xla_code(ctx):
                yield self.finding(call, f"torch.compile(backend={name!r}) in XLA code", fix)
            elif isinstance(name, str) and name in XLA_DYNAMO_BACKENDS and name not in xla_backends(self.settings) \
                    and model.in_xla_code(ctx) and not model.version_adaptive(ctx):
                yield self.finding(call, f"backend={name!r} is not registered with torch_xla "
                                         f"{self.settings.version_text}", fix)
        for func in model.functions:
            for deco in func.node.decorator_list:
                if type(deco) is not ast.Call and model.qualname(deco, func.ctx) == "torch.compile" \
                        and model.in_xla_code(func.ctx):
                    yield self.finding(deco, "@torch.compile without backend= uses inductor in XLA code", fix)


#: packages that import torch_xla themselves when it is installed (their import may register
#: the ``xla`` device): a module importing one is never reported by XLA406
_LOADS_TORCH_XLA = frozenset({"accelerate", "transformers", "lightning", "pytorch_lightning", "lightning_fabric",
                              "optimum", "diffusers", "vllm", "torchax", "torchprime", "keras", "jax"})
#: packages that never import torch_xla: with the standard library, the only imports a module
#: linted alone (no project) may have for XLA406 to know nothing else registered the device
_PLAIN_PACKAGES = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "numpy", "scipy", "pandas", "PIL",
                             "tqdm", "matplotlib", "sklearn", "yaml", "wandb", "tensorboard", "tensorboardX"})


@rule
class XlaDeviceWithoutTorchXla(Rule):
    """## What it does
    Flags an `"xla"` device in a module that never imports torch_xla: `.to("xla")`
    (also `"xla:0"`, `f"xla:{i}"`, `"xla" if tpu else "cpu"`), `torch.device("xla")`,
    `device="xla"` on a torch call (`torch.zeros(2, device="xla")`) and
    `torch.set_default_device("xla")`, where nothing else of the program imports torch_xla
    either. Unlike the other device rules it runs outside XLA code (a module without a
    torch_xla import), as the environment-variable rules do; a file that never quotes
    `xla` (`"xla`, `'xla`) stays on the fast path.

    ## Why is this bad?
    The `xla` device type is PyTorch's, but its kernels come from torch_xla: `import
    torch_xla` registers the backend (its `_XLAC` extension). Without the import,
    `torch.device("xla")` builds a device object, and the first tensor on it fails:
    `.to("xla")` raises `RuntimeError: PyTorch is not linked with support for xla devices`
    and a factory raises `NotImplementedError: Could not run 'aten::empty.memory_format'
    with arguments from the 'XLA' backend`. torch_xla 2.9 declares no
    `torch.backends` entry point, so `import torch` does not load it (as it loads other
    out-of-tree backends since torch 2.5).

    ## Known problems
    Silent where some other code may have imported torch_xla first: a module that imports
    torch_xla anywhere (also under a guard, a `try`, or `importlib.import_module`), a
    module project mode finds reached from launched XLA code, a module of a project where
    any file names torch_xla (it may be the entry point that imports this one), and a
    module that imports a package that loads torch_xla itself (`accelerate`,
    `transformers`, `lightning`, `optimum`, `diffusers`, `vllm`). Linted alone (stdin,
    `--xla-project=off`) it fires only in a script (code at module level or under
    `if __name__ == "__main__":`, or a module with that guard) whose every import is the
    standard library or a package that never imports torch_xla (`torch`, `torchvision`,
    `numpy`, ...). A device test (`x.device.type == "xla"`) and a `device=` argument of a
    non-torch call (a library's own option) are no device use.

    ## Example
    ```python
    import torch

    model = torch.nn.Linear(4, 2).to("xla")
    ```

    ## Use instead
    ```python
    import torch
    import torch_xla

    model = torch.nn.Linear(4, 2).to(torch_xla.device())
    ```

    ## References
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` (`import torch_xla`, then
      `torch_xla.device()`)
    - torch_xla `setup.py` at v2.9.0 (entry points: console scripts and `torch_xla.plugins`,
      no `torch.backends`)
    - Applies to torch_xla 2.0-2.9 (the device is registered by the import in every release).
    """

    code = "XLA406"
    name = "xla-device-without-torch-xla"
    message = '"xla" device in a module that never imports torch_xla: using it raises'
    fix = "add import torch_xla"
    scope = UNIMPORTED
    severity = "E"
    versions = "2.0+"
    reported_at = ('the `.to("xla")` / `torch.device("xla")` / `torch.set_default_device("xla")` call, or the '
                   '`"xla"` value of a `device=` argument')
    fix_applicability = "unsafe"
    bad = [
        "import torch\nmodel = torch.nn.Linear(4, 2).to('xla')\n",
        "import torch\n\ndef main():\n    x = torch.zeros(2, device='xla:0')\n    print(x)\n\n"
        "if __name__ == '__main__':\n    main()\n",
    ]
    good = [
        "import torch\nimport torch_xla\nmodel = torch.nn.Linear(4, 2).to('xla')\n",
        "import torch\nfrom accelerate import Accelerator\nmodel = torch.nn.Linear(4, 2).to('xla')\n",
        "import torch\ndef move(model):\n    return model.to('xla')  # a helper an XLA script may import\n",
        "import torch\nfrom utils import setup\nmodel = torch.nn.Linear(4, 2).to('xla')\n",
        "import torch\nx = torch.zeros(2)\nprint(x.device.type == 'xla')\n",
    ]

    def check(self, model):
        found = list(self._uses(model))
        if not found or not self._unregistered(model, found):
            return
        for node, _ in found:
            yield self.finding(node)

    def _uses(self, model):
        """``(node, ctx)`` of every use of an ``"xla"`` device string, once per node."""
        for call, ctx in _unique(model.method_calls("to"), model.keyword_calls("device"),
                                 model.calls_to("torch.device", "torch.set_default_device")):
            q = model.call_name(call, ctx)
            func = call.func
            if q in ("torch.device", "torch.set_default_device"):
                arg = model.kwarg(call, "type" if q == "torch.device" else "device", 0)
                if _xla_string(model, arg, ctx):
                    yield call, ctx
                continue
            if type(func) is ast.Attribute and func.attr == "to" and q is None:
                arg = call.args[0] if call.args else model.kwarg(call, "device", 99)
                if _xla_string(model, arg, ctx):
                    yield call, ctx
                continue
            if q is not None and q.startswith("torch."):
                for kw in call.keywords:
                    if kw.arg == "device" and _xla_string(model, kw.value, ctx):
                        yield kw.value, ctx

    def _unregistered(self, model, found) -> bool:
        """Nothing else may have imported torch_xla: no import here of a package that loads
        it, and a project where no file names it (or, alone, a script of plain imports)."""
        roots, unknown = _import_roots(model.tree)
        if roots & _LOADS_TORCH_XLA:
            return False
        known = model.project_names_xla()
        if known is not None:
            return not known
        if unknown or any(r not in _PLAIN_PACKAGES and r not in sys.stdlib_module_names for r in roots):
            return False  # linted alone: an import that may be the project's own (it may import torch_xla)
        return _has_main_guard(model.tree) or any(ctx.func is None for _, ctx in found)


def _xla_string(model, expr, ctx) -> bool:
    """``expr`` may be an ``"xla"`` device string (``"xla"``, ``"xla:0"``, ``f"xla:{i}"``,
    one arm of a conditional, a name bound to one); False when unknown."""
    if not isinstance(expr, ast.AST):
        return False
    leaves = device_leaves(model, expr, ctx)
    for e, c in leaves or ():
        text = str_value(model, e, c)
        if text is not None and (text == "xla" or text.startswith("xla:")):
            return True
    return False


def _import_roots(tree) -> tuple[set, bool]:
    """The top-level package of every absolute import in the module, and whether some
    import cannot be named so (relative, ``importlib.import_module``, ``__import__``)."""
    roots, unknown = set(), False
    for node in ast.walk(tree):
        t = type(node)
        if t is ast.Import:
            roots.update(a.name.split(".", 1)[0] for a in node.names)
        elif t is ast.ImportFrom:
            if node.level or not node.module:
                unknown = True
            else:
                roots.add(node.module.split(".", 1)[0])
        elif t is ast.Call and (type(node.func) is ast.Name and node.func.id == "__import__"
                                or type(node.func) is ast.Attribute and node.func.attr == "import_module"):
            unknown = True
    return roots, unknown


def _has_main_guard(tree) -> bool:
    return any(type(s) is ast.If and _is_main_guard(s.test) for s in getattr(tree, "body", ()))

"""XLA4: devices."""

from __future__ import annotations

import ast

from ..model import UNKNOWN
from ..registry import Rule, rule
from ._common import at_least, device_call, is_cuda_string, is_rank_value, render, str_value

CUDA_CALLS = {
    "torch.cuda.set_device": "drop it: each process already owns its XLA device",
    "torch.cuda.synchronize": None,  # version-dependent, see _sync_fix
    "torch.cuda.empty_cache": "drop it: the XLA runtime manages device memory",
}


def _sync_fix(settings):
    if at_least(settings, "2.5"):
        return "use torch_xla.sync(wait=True) to wait for the device"
    return "use xm.wait_device_ops() to wait for the device"


@rule
class CudaDeviceInXlaCode(Rule):
    """## What it does
    Flags CUDA placement in XLA code: `.cuda()`, `torch.device("cuda...")`,
    `device="cuda..."`, `.to("cuda...")` (strings, f-strings and `"cuda" if ... else ...`),
    and `torch.cuda.set_device`, `torch.cuda.synchronize`, `torch.cuda.empty_cache`.

    ## Why is this bad?
    A TPU host has no CUDA: the call raises (`Found no NVIDIA driver`), or the
    `"cuda" if torch.cuda.is_available() else "cpu"` idiom silently trains on the CPU.

    ## Known problems
    Not reported in branches that run only without XLA (the `else` of an XLA test, code
    after `if on_tpu: ... return`, the body of `if torch.cuda.is_available():`), nor
    `torch.cuda.is_available()` used as a test.

    ## Example
    ```python
    model = model.cuda()
    x = torch.zeros(2, 4, device="cuda")
    torch.cuda.synchronize()
    ```

    ## Use instead
    ```python
    device = torch_xla.device()
    model = model.to(device)
    x = torch.zeros(2, 4, device=device)
    torch_xla.sync(wait=True)
    ```

    ## References
    - torch_xla `docs/source/learn/xla-examples.md` ("Replace `cuda` with `torch_xla.device()`")
    - torch_xla `docs/source/learn/trace-vs-execution-time.md` (`torch_xla.sync(wait=True)`)
    - Applies to torch_xla 2.0-2.9 (`torch_xla.device()` since 2.3).
    """

    code = "XLA401"
    name = "cuda-device-in-xla-code"
    message = "CUDA device in XLA code"
    fix = "use torch_xla.device()"
    severity = "E"
    versions = "2.0+"
    bad = [
        "import torch\nimport torch_xla\n"
        "def f(model):\n    model.cuda()\n    return torch.zeros(2, device='cuda:0')\n",
        "import torch\nimport torch_xla\ntorch.cuda.synchronize()\n",
    ]
    good = [
        "import torch\nimport torch_xla\n"
        "def f(model):\n"
        "    if torch.cuda.is_available():\n        return model.cuda()\n"
        "    return model.to(torch_xla.device())\n",
        "import torch\ndef f(model):\n    return model.cuda()  # no torch_xla: not XLA code\n",
    ]

    def check(self, model):
        dev = device_call(self.settings)
        for call, ctx in model.calls:
            func = call.func
            if type(func) is ast.Attribute and func.attr == "cuda" and model.call_name(call, ctx) is None:
                if model.in_xla_code(ctx):
                    yield self.finding(call, ".cuda() in XLA code", f"use .to({dev})")
                continue
            q = model.call_name(call, ctx)
            if q in CUDA_CALLS:
                if model.in_xla_code(ctx):
                    fix = CUDA_CALLS[q] or _sync_fix(self.settings)
                    yield self.finding(call, f"{q}() in XLA code", fix)
                continue
            if q == "torch.device" and is_cuda_string(model, model.kwarg(call, "type", 0), ctx):
                if model.in_xla_code(ctx):
                    yield self.finding(call, 'torch.device("cuda") in XLA code', f"use {dev}")
                continue
            if type(func) is ast.Attribute and func.attr == "to" and call.args \
                    and is_cuda_string(model, call.args[0], ctx):
                if model.in_xla_code(ctx):
                    yield self.finding(call, '.to("cuda") in XLA code', f"use .to({dev})")
                continue
            for kw in call.keywords:
                if kw.arg == "device" and is_cuda_string(model, kw.value, ctx):
                    if model.in_xla_code(ctx):
                        yield self.finding(kw.value, 'device="cuda" in XLA code', f"use device={dev}")
                    break


XLA_DEVICE_APIS = ("torch_xla.device", "torch_xla.core.xla_model.xla_device")


@rule
class RankIndexedDevice(Rule):
    """## What it does
    Flags a device chosen by the process rank in XLA code: `.to(rank)` / `.to(0)` (an
    integer is a CUDA index), `xm.xla_device(rank)`, `torch_xla.device(rank)`,
    `torch.device("xla", rank)` and `f"xla:{rank}"`; in code started by the XLA launcher
    also any explicit index other than 0.

    ## Why is this bad?
    Each PJRT process sees only its own chip, as `xla:0`. An integer given to `.to()` is
    a CUDA device (`Found no NVIDIA driver`); `torch_xla.device(rank)` raises `IndexError`
    or silently switches a thread's default device on TPU v2/v3.

    ## Known problems
    `torch_xla.device(i)` over `torch_xla.devices()` in a single process (addressing its
    local devices on purpose) is not reported.

    ## Example
    ```python
    def _mp_fn(rank):
        model = model.to(rank)
        device = xm.xla_device(rank)
    ```

    ## Use instead
    ```python
    def _mp_fn(rank):
        device = torch_xla.device()
        model = model.to(device)
    ```

    ## References
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` ("you will see `xla:0` on all devices")
    - torch_xla `torch_xla/torch_xla.py` `device(index)`; `torch_xla/_internal/pjrt.py` `_SpawnFn`
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA402"
    name = "rank-indexed-device"
    message = "device indexed by the process rank in XLA code"
    fix = "use torch_xla.device(): each process sees its own chip as xla:0"
    severity = "E"
    versions = "2.0+"
    supersedes = ("XLA804",)
    bad = [
        "import torch_xla\n"
        "def f(rank, model):\n    model.to(rank)\n    return torch_xla.device(rank)\n"
        "torch_xla.launch(f, args=(None,))\n",
    ]
    good = [
        "import torch_xla\n"
        "for i in range(len(torch_xla.devices())):\n    d = torch_xla.device(i)\n",
        "import torch_xla\n"
        "def f(rank, model):\n    return model.to(torch_xla.device())\n"
        "torch_xla.launch(f, args=(None,))\n",
    ]

    def check(self, model):
        dev = device_call(self.settings)
        fix = f"use {dev}: each process sees its own chip as xla:0"
        for call, ctx in model.calls:
            func = call.func
            q = model.call_name(call, ctx)
            if q is None and type(func) is ast.Attribute and func.attr == "to" and call.args:
                arg = call.args[0]
                if (type(arg) is ast.Constant and type(arg.value) is int) or is_rank_value(model, arg, ctx):
                    if model.in_xla_code(ctx):
                        yield self.finding(call, f".to({render(arg)}) in XLA code: an integer is a CUDA device index",
                                           f"use .to({dev}): each process sees its own chip as xla:0")
                    continue
            if q in XLA_DEVICE_APIS:
                arg = model.kwarg(call, "index" if q == "torch_xla.device" else "n", 0)
                if self._rank_index(model, arg, ctx) and model.in_xla_code(ctx):
                    yield self.finding(call, f"{'xm.xla_device' if q != 'torch_xla.device' else q}({render(arg)}) picks a device by rank", fix)
                continue
            if q == "torch.device" and call.args:
                if len(call.args) > 1:
                    text = str_value(model, call.args[0], ctx)
                    if text == "xla" and self._rank_index(model, call.args[1], ctx) and model.in_xla_code(ctx):
                        yield self.finding(call, f'torch.device("xla", {render(call.args[1])}) picks a device by rank', fix)
                    continue
            for arg in _device_args(call, q):
                if self._xla_string_with_rank(model, arg, ctx) and model.in_xla_code(ctx):
                    yield self.finding(arg, "xla:<rank> device string in XLA code", fix)

    def _rank_index(self, model, arg, ctx) -> bool:
        if arg is None or arg is UNKNOWN:
            return False
        if is_rank_value(model, arg, ctx):
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

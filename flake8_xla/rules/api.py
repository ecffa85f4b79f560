"""XLA8: deprecated, removed and misused torch_xla APIs (driven by ``api_table``)."""

from __future__ import annotations

import ast
import functools

from .. import api_table
from ..model import UNKNOWN
from ..registry import ANYWHERE, Rule, rule
from ..settings import version_str
from ._common import short_name


def _v(text: str | None):
    return None if text is None else tuple(int(p) for p in text.split("."))


def _replacement(entry, settings) -> str:
    since = _v(entry["replacement_since"])
    if since is not None and settings.target_version < since:
        return ""
    return f"use {entry['replacement']}"


class ApiChangeRule(Rule):
    """Base of the rules that report one or more entries of ``api_table.CHANGES``."""

    scope = ANYWHERE
    severity = "C"

    def check(self, model):
        target = self.settings.target_version
        for entry in api_table.CHANGES:
            if entry["code"] != self.code:
                continue
            deprecated, removed = _v(entry["deprecated"]), _v(entry["removed"])
            display = short_name(entry["name"])
            if removed is not None and target >= removed:
                problem = f"{display} was removed in torch_xla {entry['removed']} (AttributeError from {entry['removed']} on)"
            elif deprecated is not None and target >= deprecated:
                problem = f"{display} is deprecated since torch_xla {entry['deprecated']}"
                if removed is not None:
                    problem += f" and removed in {entry['removed']}"
            else:
                continue
            fix = _replacement(entry, self.settings) or self.fix
            for node, q, ctx in model.references(entry["name"]):
                if q == entry["name"]:
                    text = problem.replace("(AttributeError", "(ImportError") if type(node) is ast.alias else problem
                    yield self.finding(node, text, fix)


@rule
class RemovedXrtWorldSize(ApiChangeRule):
    """## What it does
    Flags `xm.xrt_world_size` (call, reference or from-import, every import spelling).

    ## Why is this bad?
    Deprecated in torch_xla 2.5 (a one-time log line) and removed in 2.7: the script
    crashes with `AttributeError` (or `ImportError`) on upgrade.

    ## Example
    ```python
    world = xm.xrt_world_size()
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr
    world = xr.world_size()
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` (deprecated alias 2.5-2.6, #7679; removed 2.7, #8927)
    - torch_xla `docs/source/learn/_pjrt.md` (`xr.world_size()` since 2.1)
    - Reported from `--xla-version=2.5` on.
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA801"
    name = "removed-xrt-world-size"
    message = "xm.xrt_world_size is removed"
    fix = "use torch_xla.runtime.world_size()"
    versions = "deprecated 2.5, removed 2.7"
    bad = ["import torch_xla.core.xla_model as xm\nn = xm.xrt_world_size()\n",
           "from torch_xla.core.xla_model import xrt_world_size\n"]
    good = ["import torch_xla.runtime as xr\nn = xr.world_size()\n"]


@rule
class RemovedGetOrdinal(ApiChangeRule):
    """## What it does
    Flags `xm.get_ordinal` (call, reference or from-import, every import spelling).

    ## Why is this bad?
    Deprecated in torch_xla 2.5 and removed in 2.7: `AttributeError` on upgrade.

    ## Example
    ```python
    rank = xm.get_ordinal()
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr
    rank = xr.global_ordinal()
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` (deprecated alias 2.5-2.6, #7679; removed 2.7, #8927)
    - Reported from `--xla-version=2.5` on.
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA802"
    name = "removed-get-ordinal"
    message = "xm.get_ordinal is removed"
    fix = "use torch_xla.runtime.global_ordinal()"
    versions = "deprecated 2.5, removed 2.7"
    bad = ["from torch_xla.core import xla_model as xm\nr = xm.get_ordinal()\n"]
    good = ["import torch_xla.runtime as xr\nr = xr.global_ordinal()\n"]


@rule
class DeprecatedXlaDevice(ApiChangeRule):
    """## What it does
    Flags `xm.xla_device` (deprecated from torch_xla 2.8) and `xr.xla_device` (removed in
    2.8), every import spelling.

    ## Why is this bad?
    `xm.xla_device()` emits `DeprecationWarning: Use torch_xla.device instead` from 2.8
    (and ignores `devkind=`); `torch_xla.runtime.xla_device` no longer exists in 2.8.

    ## Known problems
    Not reported for `--xla-version` below 2.8, where `xm.xla_device()` is the documented
    call for releases before `torch_xla.device()` (2.3).

    ## Example
    ```python
    device = xm.xla_device()
    ```

    ## Use instead
    ```python
    device = torch_xla.device()
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` `@deprecated("Use torch_xla.device instead")` (#9200, 2.8)
    - torch_xla `torch_xla/runtime.py` (`xla_device` 2.1-2.7)
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA804"
    name = "deprecated-xla-device"
    message = "xm.xla_device is deprecated"
    fix = "use torch_xla.device()"
    versions = "deprecated 2.8 (xm); removed 2.8 (xr)"
    bad = ["import torch_xla.core.xla_model as xm\nd = xm.xla_device()\n",
           "import torch_xla.runtime as xr\nd = xr.xla_device()\n"]
    good = ["import torch_xla\nd = torch_xla.device()\n"]


@rule
class DeprecatedMarkStep(ApiChangeRule):
    """## What it does
    Flags `xm.mark_step` (call, reference or from-import, every import spelling).

    ## Why is this bad?
    Deprecated from torch_xla 2.8 (`DeprecationWarning: Use torch_xla.sync instead`).

    ## Known problems
    Not reported for `--xla-version` below 2.8 (`torch_xla.sync()` exists from 2.4).

    ## Example
    ```python
    xm.mark_step()
    ```

    ## Use instead
    ```python
    torch_xla.sync()
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` `@deprecated("Use torch_xla.sync instead")` (#9086, 2.8)
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA805"
    name = "deprecated-mark-step"
    message = "xm.mark_step is deprecated"
    fix = "use torch_xla.sync()"
    versions = "deprecated 2.8"
    bad = ["import torch_xla.core.xla_model as xm\nxm.mark_step()\n"]
    good = ["import torch_xla\ntorch_xla.sync()\n"]


@functools.lru_cache(maxsize=None)
def _params(text: str):
    """Parse a parameter list into (name, kind, has_default, annotation) tuples."""
    args = ast.parse(f"def f({text}): pass").body[0].args

    def ann(a):
        return a.annotation.id if type(a.annotation) is ast.Name else None

    out = [(a.arg, "pos", False, ann(a)) for a in args.posonlyargs + args.args]
    defaults = len(args.defaults)
    if defaults:
        out[-defaults:] = [(n, k, True, t) for n, k, _, t in out[-defaults:]]
    if args.vararg:
        out.append((args.vararg.arg, "vararg", False, None))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append((a.arg, "kwonly", d is not None, ann(a)))
    if args.kwarg:
        out.append((args.kwarg.arg, "varkw", False, None))
    return tuple(out)


_PY_TYPES = {"int": int, "str": str, "bool": bool}


def _wrong_type(value_node, annotation) -> bool:
    """A literal whose type cannot be the annotated one (``"TPU"`` for ``max_devices: int``)."""
    expected = _PY_TYPES.get(annotation or "")
    if expected is None or type(value_node) is not ast.Constant or value_node.value is None:
        return False
    return not isinstance(value_node.value, expected) or (expected is int and isinstance(value_node.value, bool))


def bind_error(call: ast.Call, params) -> str | None:
    """Why ``call``'s arguments cannot bind to ``params`` (as Python would say), or None."""
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    positional = [p for p in params if p[1] == "pos"]
    has_var = any(p[1] == "vararg" for p in params)
    has_varkw = any(p[1] == "varkw" for p in params)
    if len(call.args) > len(positional) and not has_var:
        given = len(call.args)
        return (f"takes {len(positional)} positional argument{'s' if len(positional) != 1 else ''} "
                f"but {given} {'was' if given == 1 else 'were'} given")
    bound = {p[0] for p in positional[: len(call.args)]}
    names = {p[0]: p for p in params if p[1] in ("pos", "kwonly")}
    for kw in call.keywords:
        if kw.arg not in names:
            if not has_varkw:
                return f"got an unexpected keyword argument '{kw.arg}'"
            continue
        if kw.arg in bound:
            return f"got multiple values for argument '{kw.arg}'"
        bound.add(kw.arg)
    missing = [p[0] for p in params if p[1] in ("pos", "kwonly") and not p[2] and p[0] not in bound]
    if missing:
        return f"missing required argument '{missing[0]}'"
    passed = list(zip(positional, call.args)) + [(names[k.arg], k.value) for k in call.keywords if k.arg in names]
    for param, value in passed:
        if _wrong_type(value, param[3]):
            return f"got {type(value.value).__name__} {value.value!r} for '{param[0]}' (an {param[3]})"
    return None


@rule
class BadCallSignature(Rule):
    """## What it does
    Flags a call to a torch_xla API whose arguments cannot bind to its signature in the
    target torch_xla version: a missing required argument (`xm.optimizer_step()` without
    the optimizer), a removed keyword (`xm.get_local_ordinal(defval=0)` from 2.5,
    `xm.get_xla_supported_devices(devkind=...)` from 2.8), too many positional arguments.

    ## Why is this bad?
    The call raises `TypeError` at run time, typically only after the job has been
    scheduled on a TPU.

    ## Known problems
    Calls with `*args` or `**kwargs` are not checked. Only the APIs in the signature table
    are known.

    ## Example
    ```python
    xm.optimizer_step()
    ```

    ## Use instead
    ```python
    xm.optimizer_step(optimizer)
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` (`optimizer_step(optimizer, barrier=False, ...)`, 2.0-2.9;
      `get_local_ordinal()` without `defval` from 2.5; `get_xla_supported_devices(max_devices=None)` from 2.8)
    - Signatures checked on the release tags 2.0-2.9.
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA809"
    name = "bad-call-signature"
    message = "call does not match the torch_xla signature"
    fix = "pass the arguments the API takes"
    scope = ANYWHERE
    severity = "E"
    versions = "2.0+ (per-version signatures)"
    bad = ["import torch_xla.core.xla_model as xm\nxm.optimizer_step()\n",
           "import torch_xla.core.xla_model as xm\nxm.get_local_ordinal(defval=0)\n"]
    good = ["import torch_xla.core.xla_model as xm\ndef f(opt, *a):\n    xm.optimizer_step(opt)\n    xm.optimizer_step(*a)\n"]

    def check(self, model):
        target = self.settings.target_version
        for name, variants in api_table.SIGNATURES.items():
            current = [v for v in variants if _v(v[0]) <= target and (v[1] is None or target <= _v(v[1]))]
            if not current:
                continue
            first, _, params_text, suggestion = current[0]
            params = _params(params_text)
            for call, ctx in model.calls_to(name):
                why = bind_error(call, params)
                if why is None:
                    continue
                display = short_name(name)
                yield self.finding(
                    call, f"{display}() {why} (torch_xla {version_str(target)}: {display}({params_text}))",
                    f"call {suggestion}",
                )


del UNKNOWN

"""XLA8: deprecated, removed and misused torch_xla APIs (driven by ``api_table``)."""

from __future__ import annotations

import ast
import difflib
import functools

from .. import api_table
from ..registry import ANYWHERE, ENV, ENV_PREFIXES, Rule, rule
from ..settings import Settings, version_str
from ._common import env_finding, env_writes, pjrt_fix, short_name


_v = api_table.vtuple


def _use(text: str) -> str:
    """The fix for a replacement text: ``use xr.world_size()``; ``drop it ...`` as it is."""
    return text if text.startswith("drop") else f"use {short_name(text)}"


def _replacement(entry, settings) -> str:
    since = _v(entry["replacement_since"])
    if since is not None and settings.target_version < since:
        return ""
    return _use(entry["replacement"])


@functools.lru_cache(maxsize=None)
def _records(code: str, target: tuple[int, int]) -> tuple:
    """``(entry, status, replacement fix or "")`` of the change records of ``code`` that
    ``target`` reports."""
    settings = Settings(target_version=target)
    out = []
    for entry in api_table.changes():
        if entry["code"] == code:
            status = _status(entry, settings)
            if status is not None:
                out.append((entry, status, _replacement(entry, settings)))
    return tuple(out)


def _status(entry, settings):
    """('removed' | 'deprecated' | None) of a change record for the target version."""
    target = settings.target_version
    if entry["removed"] is not None and target >= _v(entry["removed"]):
        return "removed"
    if entry["deprecated"] is not None and target >= _v(entry["deprecated"]):
        return "deprecated"
    return None


def _problem(entry, display, status) -> str:
    """``X was removed in torch_xla 2.7`` / ``X is deprecated since torch_xla 2.5, removed in
    2.7``; the error a removed name raises (AttributeError, ImportError,
    ModuleNotFoundError) is on the rule's page."""
    if status == "removed":
        return f"{display} was removed in torch_xla {entry['removed']}"
    text = f"{display} is deprecated since torch_xla {entry['deprecated']}"
    if entry["removed"] is not None:
        text += f", removed in {entry['removed']}"
    return text


def _imported_plainly(model, name: ast.Name, ctx) -> bool:
    """Is every binding of ``name`` seen at ``ctx`` an import outside version-adaptive code
    (not the ``except ImportError:`` fallback of a try-import of the replacement)?"""
    bindings = model.lookup(name.id, ctx, name.lineno)
    return bool(bindings) and all(kind == "import" and b_ctx is not None and not model.version_adaptive(b_ctx)
                                  for _, kind, _, b_ctx in bindings)


class ApiChangeRule(Rule):
    """Base of the rules that report records of ``api_table.changes()`` (one code each)."""

    scope = ANYWHERE
    severity = "C"
    supersedes = ("XLA809", "XLA812")  # replacing the name fixes its arguments too

    def check(self, model):
        for entry, status, replacement in _records(self.code, self.settings.target_version):
            fix = replacement or self.fix
            if entry["kind"] == "module":
                yield from self._module(model, entry, status, fix)
                continue
            text = _problem(entry, short_name(entry["name"]), status)
            seen = set()
            for node, q, ctx in model.references(entry["name"]):
                if q == entry["name"] and not model.version_adaptive(ctx) and not model.probe_fallback(node):
                    seen.add((node.lineno, node.col_offset))
                    yield self.finding(node, text, fix)
            # a name bound by `from ... import xrt_world_size [as ws]`: each call `ws()` needs
            # its own edit too (a name bound two ways, as by a try-import fallback, resolves
            # to nothing and stays silent)
            for call, ctx in model.calls_to(entry["name"]):
                func = call.func
                if type(func) is ast.Name and (func.lineno, func.col_offset) not in seen \
                        and not model.version_adaptive(ctx) and _imported_plainly(model, func, ctx):
                    yield self.finding(func, text, fix)

    def _module(self, model, entry, status, fix):
        module = entry["name"]
        names = entry.get("names", {})
        for node, full, ctx in model.import_refs(module):
            if not model.version_adaptive(ctx):
                yield self.finding(node, _problem(entry, full, status), fix)
        for node, q, ctx in model.references(module):
            if model.version_adaptive(ctx) or model.probe_fallback(node):
                continue
            rest = q[len(module) + 1:].split(".", 1)[0] if q != module else ""
            display = f"{module}.{rest}" if rest else module
            specific = names.get(rest)
            if type(node) is not ast.alias:
                root = model.root_import(node, ctx)
                if root is not None and (root == module or root.startswith(module + ".")) and not specific:
                    continue  # the import is reported; the use needs no other change
            yield self.finding(node, _problem(entry, display, status),
                               _use(api_table.pick(specific, self.settings.target_version)) if specific else fix)
        # `from torch_xla.experimental.pjrt import world_size`: each call `world_size()` needs
        # its own edit (to `xr.world_size()`) when the name has a replacement of its own
        for rest, specific in names.items():
            for call, ctx in model.calls_to(f"{module}.{rest}"):
                func = call.func
                if type(func) is ast.Name and not model.version_adaptive(ctx) and _imported_plainly(model, func, ctx):
                    yield self.finding(func, _problem(entry, f"{module}.{rest}", status),
                                       _use(api_table.pick(specific, self.settings.target_version)))


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
    fix = "use xr.world_size()"
    severity = "E"  # removed in the default target: it raises
    versions = "deprecated 2.5, removed 2.7"
    reported_at = ('each use: the attribute chain (`xm.xrt_world_size`), or the name in `from ... import xrt_world_size`'
                   ' and each call of the name it binds (`xrt_world_size()`, an `as` alias too)')
    fix_applicability = "safe"
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
    fix = "use xr.global_ordinal()"
    severity = "E"  # removed in the default target: it raises
    versions = "deprecated 2.5, removed 2.7"
    reported_at = ('each use: the attribute chain (`xm.get_ordinal`), or the name in `from ... import get_ordinal`'
                   ' and each call of the name it binds (`get_ordinal()`, an `as` alias too)')
    fix_applicability = "safe"
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
    reported_at = ('each use: the attribute chain (`xm.xla_device`), or the name in `from ... import xla_device`'
                   ' and each call of the name it binds (`xla_device()`, an `as` alias too)')
    fix_applicability = "safe"
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
    reported_at = ('each use: the attribute chain (`xm.mark_step`), or the name in `from ... import mark_step`'
                   ' and each call of the name it binds (`mark_step()`, an `as` alias too)')
    fix_applicability = "safe"
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
    are known. The message names the target release (`(torch_xla 2.9)`); each API's
    signature per release is in `flake8_xla/data/torch_xla_signatures.json`.

    ## Example
    ```python
    xm.optimizer_step()
    ```

    ## Use instead
    ```python
    xm.optimizer_step(optimizer)
    ```
    A removed argument gets the API that replaces it: `xm.get_local_ordinal(defval=0)` ->
    `xr.local_ordinal()` (`import torch_xla.runtime as xr`, 2.1+),
    `xm.get_xla_supported_devices(devkind=...)` -> `torch_xla.devices()` (2.3+).

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
    reported_at = 'the call'
    bad = ["import torch_xla.core.xla_model as xm\nxm.optimizer_step()\n",
           "import torch_xla.core.xla_model as xm\nxm.get_local_ordinal(defval=0)\n"]
    good = ["import torch_xla.core.xla_model as xm\ndef f(opt, *a):\n    xm.optimizer_step(opt)\n    xm.optimizer_step(*a)\n"]

    def check(self, model):
        target = self.settings.target_version
        version = version_str(target)
        index = model.call_index()
        for name, params in _signatures_in(target).items():
            calls = index.get(name)
            if not calls:
                continue
            display = short_name(name)
            for call, ctx in calls:
                why = bind_error(call, params)
                if why is None:
                    continue
                suggestion = api_table.suggestion(name)
                suggestion = api_table.pick(suggestion, target) if suggestion else f"{display}({_required(params)})"
                # the signature itself is on the rule's page; the message names the release
                yield self.finding(call, f"{display}() {why} (torch_xla {version})", f"call {suggestion}")


@functools.lru_cache(maxsize=None)
def _signatures_in(target: tuple[int, int]) -> dict[str, tuple]:
    """qualname -> parsed parameter list of every API the signature table defines in
    ``target`` (an API the release does not define is XLA812's)."""
    out = {}
    for name in api_table.signatures():
        params_text = api_table.signature(name, target)
        if params_text is not None:
            out[name] = _params(params_text)
    return out


def _required(params) -> str:
    return ", ".join(p[0] for p in params if p[1] == "pos" and not p[2])


@rule
class RemovedParseXlaDevice(ApiChangeRule):
    """## What it does
    Flags `xm.parse_xla_device` (call, reference or from-import).

    ## Why is this bad?
    Deprecated in torch_xla 2.5 and removed in 2.7 (`AttributeError`); there is no
    public replacement.

    ## Example
    ```python
    kind, index = xm.parse_xla_device(device)
    ```

    ## Use instead
    ```python
    kind, _, index = device.partition(":")   # the 'KIND:N' string: "TPU:0" -> "TPU", "0"
    ```
    (`parse_xla_device` takes hardware names such as `TPU:0`, which `torch.device` does not parse.)

    ## References
    - torch_xla `torch_xla/core/xla_model.py` (deprecated alias 2.5-2.6, #7679; removed 2.7, #8927)
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA803"
    name = "removed-parse-xla-device"
    message = "xm.parse_xla_device is removed"
    fix = "use device.partition(':') on the 'KIND:N' string"
    severity = "E"  # removed in the default target: it raises
    versions = "deprecated 2.5, removed 2.7"
    reported_at = ('each use: the attribute chain (`xm.parse_xla_device`), or the name in `from ... import parse_xla_device`'
                   ' and each call of the name it binds (`parse_xla_device()`, an `as` alias too)')
    fix_applicability = "safe"
    bad = ["import torch_xla.core.xla_model as xm\ni = xm.parse_xla_device('xla:0')\n"]
    good = ["import torch\nimport torch_xla\ni = torch.device('xla:0').index\n"]


@rule
class RemovedExperimentalPjrt(ApiChangeRule):
    """## What it does
    Flags `torch_xla.experimental.pjrt`: its import (every spelling) and uses of its names
    (`pjrt.world_size()`, `pjrt.global_ordinal()`, `pjrt.xla_device()`, ...).

    ## Why is this bad?
    The PJRT runtime API moved to `torch_xla.runtime` in 2.1; the old module kept
    deprecated aliases until 2.4 and is gone from 2.5 (`ModuleNotFoundError`).

    ## Example
    ```python
    from torch_xla.experimental import pjrt
    world = pjrt.world_size()
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr
    world = xr.world_size()
    ```

    ## References
    - torch_xla `docs/source/learn/_pjrt.md` "New features in PyTorch/XLA r2.1" (moved to `torch_xla.runtime`)
    - torch_xla `torch_xla/experimental/pjrt.py` (deprecated aliases 2.1-2.4, absent from 2.5)
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA806"
    name = "removed-experimental-pjrt"
    message = "torch_xla.experimental.pjrt is removed"
    fix = "use torch_xla.runtime"
    severity = "E"  # removed in the default target: it raises
    versions = "deprecated 2.1, removed 2.5"
    reported_at = ("the module's name in the import,"
                   " and each use of one of its names that needs its own fix (`pjrt.world_size()`, or a call of a name imported from it: `world_size()`)")
    fix_applicability = "safe"
    bad = ["import torch_xla.experimental.pjrt as pjrt\n",
           "import torch_xla\nn = torch_xla.experimental.pjrt.world_size()\n"]
    good = ["import torch_xla.runtime as xr\nn = xr.world_size()\n"]


@rule
class RemovedExperimentalSharding(ApiChangeRule):
    """## What it does
    Flags imports of `torch_xla.experimental.xla_sharding` and
    `torch_xla.experimental.xla_sharded_tensor`, every spelling.

    ## Why is this bad?
    SPMD moved to `torch_xla.distributed.spmd` in 2.2; the old modules warned until 2.4
    and are gone from 2.5 (`ModuleNotFoundError`).

    ## Example
    ```python
    import torch_xla.experimental.xla_sharding as xs
    ```

    ## Use instead
    ```python
    import torch_xla.distributed.spmd as xs     # Mesh, mark_sharding, ShardingSpec, XLAShardedTensor
    ```

    ## References
    - torch_xla `torch_xla/experimental/xla_sharding.py` shim ("Please use torch_xla.distributed.spmd instead", 2.2-2.4)
    - torch_xla `docs/source/perf/spmd_basic.md`
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA807"
    name = "removed-experimental-sharding"
    message = "torch_xla.experimental.xla_sharding is removed"
    fix = "use torch_xla.distributed.spmd"
    severity = "E"  # removed in the default target: it raises
    versions = "deprecated 2.2, removed 2.5"
    reported_at = "the module's name in the import, and each use of one of its names that needs its own fix"
    fix_applicability = "safe"
    bad = ["import torch_xla.experimental.xla_sharding as xs\n",
           "from torch_xla.experimental.xla_sharded_tensor import XLAShardedTensor\n"]
    good = ["import torch_xla.distributed.spmd as xs\nmesh = xs.Mesh([0], (1,))\n"]


@rule
class RemovedExperimentalCompile(ApiChangeRule):
    """## What it does
    Flags `torch_xla.experimental.compile` (call, reference or from-import).

    ## Why is this bad?
    Added in 2.4, deprecated in 2.5 when `torch_xla.compile` arrived, removed in 2.7
    (`AttributeError` / `ImportError`).

    ## Example
    ```python
    step_fn = torch_xla.experimental.compile(step_fn)
    ```

    ## Use instead
    ```python
    step_fn = torch_xla.compile(step_fn)
    ```

    ## References
    - torch_xla `torch_xla/experimental/eager.py` ("torch_xla.experimental.compile is deprecated. Use torch_xla.compile instead.", 2.5-2.6)
    - torch_xla `docs/source/learn/eager.md`
    - Target version: `--xla-version` (default 2.9) decides deprecated/removed wording.
    """

    code = "XLA808"
    name = "removed-experimental-compile"
    message = "torch_xla.experimental.compile is removed"
    fix = "use torch_xla.compile(fn)"
    severity = "E"  # removed in the default target: it raises
    versions = "added 2.4, deprecated 2.5, removed 2.7"
    reported_at = ('each use: the attribute chain (`torch_xla.experimental.compile`), or the name in `from ... import compile`'
                   ' and each call of the name it binds (`compile()`, an `as` alias too)')
    fix_applicability = "safe"
    bad = ["import torch_xla\nf = torch_xla.experimental.compile(lambda x: x)\n",
           "from torch_xla.experimental import compile\n"]
    good = ["import torch_xla\nf = torch_xla.compile(lambda x: x)\n"]


@rule
class XrtConfiguration(ApiChangeRule):
    """## What it does
    Flags XRT runtime configuration: `XRT_*` environment variables set in `os.environ`
    (every spelling: `[...] =`, `setdefault`, `update`, `putenv`), and
    `torch_xla.distributed.xla_dist`.

    ## Why is this bad?
    XRT was replaced by PJRT: from 2.1 the main wheels ignore `XRT_TPU_CONFIG` and friends
    (PJRT runs instead, with different process semantics), and `xla_dist` no longer
    exists. In 2.0 setting them still selects the legacy runtime.

    ## Known problems
    The variables are reported wherever they are set, whatever the module imports (a
    launcher sets them before torch_xla is imported), except in branches XLA never takes
    (`if torch.cuda.is_available():`, the `else` of `if use_tpu:`). In a module that does
    not import torch_xla only the `XRT_*` names torch_xla 2.0 read count (`XRT_TPU_CONFIG`,
    `XRT_WORKERS`, ...; another tool's `XRT_ENDPOINT` is left alone); in XLA code every
    `XRT_*` name does. `xla_dist` is reported only where torch_xla is imported.

    ## Example
    ```python
    os.environ["XRT_TPU_CONFIG"] = "localservice;0;localhost:51011"
    ```

    ## Use instead
    ```python
    os.environ["PJRT_DEVICE"] = "TPU"   # or let PJRT detect the TPU
    ```
    On a pod, run the same script on every host (PJRT needs no `xla_dist` launcher).

    ## References
    - torch_xla `docs/source/learn/_pjrt.md` (migration diff `XRT_TPU_CONFIG` -> `PJRT_DEVICE`; `xla_dist` not needed)
    - torch_xla release notes 2.1 ("the last release with XRT"); #5240 removed XRT
    - The `XRT_*` variables torch_xla reads: `third_party/xla_client/env_vars.cc` and
      `sys_util` `GetEnv*` calls at v2.0.0; none from v2.1.1 to v2.9.0
      (`flake8_xla/data/torch_xla_env_vars.json`)
    - Target version: `--xla-version` (default 2.9) decides the wording.
    """

    code = "XLA810"
    name = "xrt-configuration"
    message = "XRT runtime configuration"
    fix = "use PJRT: set PJRT_DEVICE=TPU"
    scope = ENV
    supersedes = ApiChangeRule.supersedes + ("XLA813",)  # a misspelt XRT_ variable: PJRT is the fix
    versions = "deprecated 2.0, no effect from 2.1"
    reported_at = 'the environment write (as XLA705), or the import of `torch_xla.distributed.xla_dist`'
    bad = ["import os\nimport torch_xla\nos.environ['XRT_TPU_CONFIG'] = 'localservice;0;localhost:51011'\n",
           "import os\nos.environ['XRT_TPU_CONFIG'] = 'localservice;0;localhost:51011'\n",
           "import torch_xla.distributed.xla_dist\n"]
    good = ["import os\nos.environ['PJRT_DEVICE'] = 'TPU'\n",
            "import os\nimport torch\nif torch.cuda.is_available():\n    os.environ['XRT_WORKERS'] = 'x'\n"]

    def check(self, model):
        if model.uses_torch_xla:  # xla_dist: a torch_xla name, bound only by a torch_xla import
            yield from super().check(model)
        yield from env_finding(self, model, ("XLA810",))


@rule
class XlaUseSpmdEnv(Rule):
    """## What it does
    Flags `XLA_USE_SPMD` set in `os.environ` (every spelling).

    ## Why is this bad?
    Since 2.1 `torch_xla.runtime.use_spmd()` is the way to enable SPMD and warns
    "XLA_USE_SPMD is being deprecated"; the call must come before any XLA tensor exists.

    ## Known problems
    Reported wherever the variable is set, whatever the module imports (a launcher sets
    it before torch_xla is imported), except in branches XLA never takes
    (`if torch.cuda.is_available():`, the `else` of `if use_tpu:`).

    ## Example
    ```python
    os.environ["XLA_USE_SPMD"] = "1"
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr
    xr.use_spmd()      # at program start
    ```

    ## References
    - torch_xla `torch_xla/runtime.py` `use_spmd` (#5474, 2.1; late-call warning #6680, 2.3)
    - torch_xla `docs/source/perf/spmd_basic.md`
    - torch_xla reads `XLA_USE_SPMD` in every release 2.0-2.9 (`torch_xla/runtime.py`,
      `torch_xla/csrc` `GetEnvBool("XLA_USE_SPMD", ...)`; `flake8_xla/data/torch_xla_env_vars.json`)
    - Reported from `--xla-version=2.1` on.
    """

    code = "XLA811"
    name = "xla-use-spmd-env"
    message = "XLA_USE_SPMD is deprecated"
    fix = "call xr.use_spmd() before creating XLA tensors"
    scope = ENV
    severity = "C"
    versions = "deprecated 2.1"
    reported_at = 'the environment write: the `os.environ["..."]` target, the `setdefault(...)` / `putenv(...)` call, or the key in `os.environ.update({...})`'
    bad = ["import os\nimport torch_xla\nos.environ['XLA_USE_SPMD'] = '1'\n",
           "import os\nos.environ.setdefault('XLA_USE_SPMD', '1')\n"]
    good = ["import torch_xla.runtime as xr\nxr.use_spmd()\n"]

    def check(self, model):
        yield from env_finding(self, model, ("XLA811",))


#: set by other software under the same prefixes: XLA's own flags, JAX's client options
FOREIGN_ENV = ("XLA_FLAGS",)
FOREIGN_ENV_PREFIXES = ("XLA_PYTHON_CLIENT_",)


@rule
class UnknownXlaEnv(Rule):
    """## What it does
    Flags an environment variable named `XLA_*`, `PJRT_*` or `XRT_*` set in the program
    (`os.environ[...] =`, `setdefault`, `update`, `putenv`) that no torch_xla release
    2.0-2.9 reads and that is a typo of one that some release reads: one edit (a swap of
    neighbours counts as one), or two when the names differ in a tail of six characters or
    more: `XLA_USE_F16` for `XLA_USE_FP16`, `XLA_USE_BF61` for `XLA_USE_BF16`,
    `PJRT_DEVICES` for `PJRT_DEVICE`. Also in an environment built for a child process
    (`env = os.environ.copy(); env["K"] = v`, `{**os.environ, "K": v}`). When the name it
    resembles is itself deprecated at the target release, the message gives that
    variable's fix instead of suggesting another no-op.

    ## Why is this bad?
    Nothing reads the misspelt name: the setting is a silent no-op and the job runs with
    the default (full precision, auto-detected device, no IR debug info) without a
    warning.

    ## Known problems
    Only names torch_xla itself reads count as real; a variable that another library
    (XLA's own `XLA_FLAGS`, JAX's `XLA_PYTHON_CLIENT_*`, a vendor plugin) reads under
    these prefixes is left alone when it is not near a torch_xla name, and `XLA_FLAGS` and
    `XLA_PYTHON_CLIENT_*` never fire. Names further from every real one (your own
    `XLA_MY_APP_SETTING`; `XLA_USE_PJRT`, two edits from `XLA_USE_IFRT` in a short tail,
    a no-op copied from old posts) and keys that are not literal strings are not reported.
    When two real names are equally near, the one sharing the longer beginning is named.
    Reported wherever the variable is set, whatever the module imports, except in
    branches XLA never takes (`if torch.cuda.is_available():`).

    ## Example
    ```python
    os.environ["XLA_USE_F16"] = "1"
    ```

    ## Use instead
    ```python
    os.environ["XLA_USE_FP16"] = "1"    # the name torch_xla reads (itself deprecated: XLA705)
    ```
    A near miss of `XLA_USE_SPMD` gets its fix: `xr.use_spmd()` (`import torch_xla.runtime as xr`)
    before creating XLA tensors (XLA811).

    ## References
    - The variables read by the pytorch/xla release tags v2.0.0, v2.1.1 (the v2.1.0 tag is a
      pre-release commit), v2.2.0 ... v2.9.0, generated by `scripts/gen_env_table.py` into
      `flake8_xla/data/torch_xla_env_vars.json`: torch_xla `torch_xla/csrc/runtime/env_vars.h`
      / `env_vars.cc` constants (`third_party/xla_client/env_vars.cc` in 2.0), the
      `runtime::sys_util` `GetEnvString`/`GetEnvBool`/`GetEnvInt`/`GetEnvOrdinalPath` and
      `getenv` calls, `torch_xla/core/xla_env_vars.py`, `xu.getenv_as(...)`,
      `os.environ.get(...)` / `os.getenv(...)` in `torch_xla/*.py`
    - A name any release reads is real (the union over 2.0-2.9, whatever `--xla-version` says).
    """

    code = "XLA813"
    name = "unknown-xla-env"
    message = "environment variable not read by any torch_xla release"
    fix = "check the name"
    scope = ENV
    severity = "W"
    versions = "2.0+ (names read by 2.0-2.9)"
    reported_at = 'the environment write: the `os.environ["..."]` target, the `setdefault(...)` / `putenv(...)` call, or the key in `os.environ.update({...})`'
    bad = ["import os\nos.environ['XLA_USE_F16'] = '1'\n",
           "import os\nimport torch_xla\nos.environ.setdefault('PJRT_DEVICES', 'TPU')\n"]
    good = ["import os\nos.environ['XLA_USE_FP16'] = '1'\nos.environ['PJRT_DEVICE'] = 'TPU'\n"
            "os.environ['XLA_FLAGS'] = '--xla_dump_to=/tmp'\nos.environ['XLA_MY_APP_SETTING'] = '1'\n"]

    def check(self, model):
        known = api_table.read_env_vars()
        for key, node, _ in env_writes(model):
            if not key.startswith(ENV_PREFIXES) or key in known or key in FOREIGN_ENV \
                    or key.startswith(FOREIGN_ENV_PREFIXES):
                continue
            near = api_table.nearest_env_var(key)
            if near is None:
                continue
            found = api_table.env_var(near)
            entry = found[1] if found is not None else None
            target = self.settings.target_version
            if entry is not None and entry["deprecated"] is not None and target >= _v(entry["deprecated"]):
                # the variable it resembles is itself deprecated (XLA_USE_F16 -> XLA_USE_FP16,
                # no effect since 2.5): name the real fix, not another no-op
                gone = entry.get("no_effect") is not None and target >= _v(entry["no_effect"])
                state = f"nor is {near} any more" if gone else f"and {near} is deprecated"
                yield self.finding(node, f"{key} is not read by torch_xla, {state}", pjrt_fix(model, entry["fix"]))
            else:
                yield self.finding(node, f"{key} is not read by torch_xla (a no-op)", f"did you mean {near}?")


_NOT_ASKED = object()


@functools.lru_cache(maxsize=4096)
def _problem_cached(qualname: str, version: str):
    """``NonexistentXlaApi._problem`` with the change records' names covered (no rule
    state is read: the answer depends on the qualname and the release only)."""
    return NonexistentXlaApi(Settings())._problem(qualname, version, _covered())


@functools.lru_cache(maxsize=None)
def _covered() -> tuple[str, ...]:
    """The names the change records cover (their own rules report them, not XLA812)."""
    return tuple(e["name"] for e in api_table.changes())


@rule
class NonexistentXlaApi(Rule):
    """## What it does
    Flags an attribute or import of a torch_xla module (`torch_xla`, `xm`, `xr`, `xmp`,
    `pl`, `xs`, `torch_xla.amp`) that the target torch_xla release does not define: a name
    no release ever defined (`xm.xla_world_size`, `xm.is_master_process`, `xm.get_rank`),
    one added after the target (`torch_xla.launch` on 2.4), or one removed before it.

    ## Why is this bad?
    The script dies with `AttributeError` / `ImportError` when it reaches the line, often
    after minutes of TPU set-up. Names invented by autocompletion or chat assistants are
    common here.

    ## Known problems
    Version-adaptive code is not checked: either branch of `if hasattr(<torch_xla module>,
    "name"):` or of a test on `__version__` / a name like `_XLA_GREATER_EQUAL_2_1` (whatever
    the threshold), the `except ImportError:` fallback, and names newer than the target
    imported inside `try: ... except ImportError:`. A module that does not exist in the
    target is reported at its import, not at each use. Names that another XLA8 rule covers (deprecations and removals with a replacement)
    are left to that rule. Private names (`_x`) and dunders are not checked. The public
    names per module and release were read from the release tags; a name set at run time
    by a module would be reported, none is known in these modules.

    ## Example
    ```python
    if xm.is_master_process():
        world = xm.xla_world_size()
    ```

    ## Use instead
    ```python
    import torch_xla.runtime as xr

    if xm.is_master_ordinal(local=False):
        world = xr.world_size()
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py`, `torch_xla/runtime.py`, `torch_xla/torch_xla.py`,
      `torch_xla/distributed/*.py` at the release tags 2.0-2.9 (module-level names)
    - Target version: `--xla-version` (default 2.9).
    """

    code = "XLA812"
    name = "nonexistent-xla-api"
    message = "not a torch_xla API"
    fix = "check the torch_xla API docs"
    scope = ANYWHERE
    severity = "E"
    versions = "2.0+ (per-release name lists)"
    reported_at = 'each use: the attribute chain (`xm.get_rank`), or the name in `from ... import get_rank`'
    bad = ["import torch_xla.core.xla_model as xm\nn = xm.xla_world_size()\n",
           "# options: --xla-version=2.4\nimport torch_xla\ndef f(fn):\n    torch_xla.launch(fn)\n"]
    good = ["import torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n"
            "if xm.is_master_ordinal(local=False):\n    n = xr.world_size()\n"]

    def check(self, model):
        version = self.settings.version_text
        all_refs = model.references("torch_xla")
        assigned = {q for n, q, c in all_refs if type(n) is ast.Attribute and type(n.ctx) is not ast.Load}
        # a compat shim `xm.is_master_process = ...` defines the name
        covered = _covered() + tuple(sorted(assigned))
        memo: dict[str, tuple[str, str] | None] = {}

        def problem(q):
            found = memo.get(q, _NOT_ASKED)
            if found is _NOT_ASKED:
                # the answer for the usual `covered` is the same in every module
                found = memo[q] = _problem_cached(q, version) if not assigned else self._problem(q, version, covered)
            return found

        refs = [(n, q, c) for n, q, c in all_refs if not (type(n) is ast.Attribute and type(n.ctx) is not ast.Load)]
        refs += model.import_refs("torch_xla")
        seen = set()
        for node, q, ctx in refs:
            if type(node) is ast.Attribute:
                root = model.root_import(node, ctx)
                if root is not None and problem(root) is not None:
                    continue  # `import torch_xla.runtime as xr` is reported once, not at each use of xr
            found = problem(q)
            if found is None or (node.lineno, node.col_offset) in seen:
                continue
            if model.version_adaptive(ctx, probe="does not exist" in found[0]):
                continue  # if hasattr(torch_xla, "sync"): ... else: ...; try: from torch_xla import sync
            seen.add((node.lineno, node.col_offset))
            text, fix = found
            yield self.finding(node, text, fix)

    def _usable(self, hint, version):
        """A hint if it exists in ``version``, else its older equivalent, else None."""
        if hint is None:
            return None
        target = hint.split("(", 1)[0].split(" ", 1)[0]
        if target.startswith("torch_xla.") and self._problem(target, version, ()) is not None:
            return api_table.older_equivalent(target)
        return hint

    def _problem(self, qualname, version, covered):
        """(message, fix) for the first part of ``qualname`` that ``version`` lacks, or
        None; ``covered``: names another rule reports (and names the module assigns)."""
        parts = qualname.split(".")
        tracked = api_table.tracked_modules()
        presence = api_table.module_presence()
        under = tuple(c + "." for c in covered)
        for i in range(1, len(parts)):
            module, name = ".".join(parts[:i]), parts[i]
            full = f"{module}.{name}"
            if full in covered or full.startswith(under) or name.startswith("_"):
                return None
            if full in presence and version not in presence[full]:  # a whole module
                return self._version_problem(full, presence[full], version)
            versions = api_table.name_versions(module, name)
            if versions is None:  # an untracked package on the way (torch_xla.core): go on if a tracked one is below
                if any(t.startswith(full) for t in tracked):
                    continue
                return None
            display = short_name(full)
            if not versions:
                hint = self._usable(api_table.hints().get(name), version)
                if hint is None:
                    close = difflib.get_close_matches(
                        name, [n for n in api_table.names_in(module, version) if not n.startswith("_")], n=1, cutoff=0.6)
                    hint = short_name(f"{module}.{close[0]}") if close else None
                fix = f"use {short_name(hint)}" if hint else f"see the names {short_name(module + '.')[:-1] or module} defines"
                return f"{display} is not a torch_xla API", fix
            if version not in versions:
                return self._version_problem(full, versions, version)
        return None

    def _version_problem(self, full, versions, version):
        """The message for a name or module that exists in some releases, not the target."""
        display = short_name(full)
        ordered = sorted(versions, key=api_table.vtuple)
        if api_table.vtuple(ordered[0]) > api_table.vtuple(version):
            older = api_table.older_equivalent(full)
            fix = f"use {older}" if older else f"target torch_xla {ordered[0]}+ (--xla-version)"
            # "does not exist" marks a probe (hasattr/try) as version-adaptive in check()
            return f"{display} does not exist in torch_xla {version} (added in {ordered[0]})", fix
        after = api_table.VERSIONS[api_table.VERSIONS.index(ordered[-1]) + 1]
        hint = api_table.removed_hint(full)
        return (f"{display} was removed in torch_xla {after}",
                _use(hint) if hint else "see the torch_xla release notes of that version")

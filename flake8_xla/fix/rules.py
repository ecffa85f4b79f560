"""The fix of each rule: ``FIXES[code](builder, node) -> bool`` (``FIXES`` is in ``fix/common.py``;
``fix/registry.py`` imports this module and ``fix/porting.py`` to fill it).

A fix gets the finding's LibCST node and registers edits on the builder; it returns False
when this spelling has no mechanical fix (the finding then stays for a human). Edits find
what they change on the *updated* node (by keyword or position), so fixes on one node and
on nodes inside it compose in one pass.
"""

from __future__ import annotations

import re

import libcst as cst

from .. import api_table
from . import UNSAFE
from .common import drop_statement, fixes, safe_edit, xla_init_method
from .edits import (append_arg, arg_index, dotted, drop_param, expr, insert_arg, keyword_index, kwarg,
                    positional_indices, quote_of, remove_arg, set_param, set_value, string, string_value)
from .imports import noqa_suppresses


def _parent_call(b, node):
    """The call ``node`` is an argument of, with the argument: (Arg, Call) or (None, None)."""
    arg = b.ctx.parent(node)
    call = b.ctx.parent(arg) if isinstance(arg, cst.Arg) else None
    return (arg, call) if isinstance(call, cst.Call) else (None, None)


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


# -- XLA0 / XLA1: launch, process group, DDP ---------------------------------------------

@fixes("XLA001")
def _drop_nprocs(b, node):
    # XLA001 is reported on the launch call (older findings: on the count itself)
    if isinstance(node, cst.Call):
        call = node
        arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "nprocs"), None)
        if arg is None and len(call.args) > 2 and call.args[2].keyword is None and not call.args[2].star:
            arg = call.args[2]
        if arg is None:
            return False
        node = arg.value
    else:
        arg, call = _parent_call(b, node)
        if call is None:
            return False
    # the rule's message says when every value the count may hold is visible and none is
    # None or 1 (`NUM_CORES = 8`); a count that may be 1 on purpose (a single-process debug
    # run: `nprocs=args.num_cores`) is dropped only with --unsafe-fixes
    certain = (": raises ValueError", ": ignored, ValueError")
    if not isinstance(node, cst.Integer) and not any(c in b.finding.message for c in certain):
        b.applicability = UNSAFE
    position = None if arg.keyword is not None else 2
    b.edit(call, safe_edit(lambda c: drop_param(c, "nprocs", position)), "drop nprocs")
    return True


@fixes("XLA101")
def _bucket_view(b, node):
    if not isinstance(node, cst.Call):
        return False
    b.edit(node, lambda c: set_param(c, "gradient_as_bucket_view", 9, cst.Name("True")), "bucket view")
    return True


@fixes("XLA102")
def _drop_device_ids(b, node):
    if not isinstance(node, cst.Call):
        return False

    def fn(c):
        for name, pos in (("output_device", 2), ("device_ids", 1)):
            i = arg_index(c, name, pos)
            if i is not None and not _is_none(c.args[i].value):
                c = drop_param(c, name, pos) or c
        return c
    b.edit(node, fn, "device ids")
    return True


# XLA104: init_method="xla://", rank / world_size dropped (XLA103 adds it too)
fixes("XLA104")(xla_init_method)


@fixes("XLA106")
def _pjrt_init_method(b, node):
    if not isinstance(node, cst.Call):
        return False
    i = arg_index(node, "init_method", 1)
    if i is None or string_value(node.args[i].value) != "pjrt://":
        return False
    literal = string("xla://", quote_of(node.args[i].value))

    def fn(c):
        j = arg_index(c, "init_method", 1)
        return None if j is None else set_value(c, j, literal)
    b.edit(node, safe_edit(fn), "init method")
    return True


def _literal(node, value) -> bool:
    return isinstance(node, cst.Name) and node.value == repr(value)


@fixes("XLA002")
def _xla_launcher(b, node):
    """``mp.spawn(fn, args=..., nprocs=...)`` -> ``torch_xla.launch(fn, args=...)`` (``xmp.spawn``
    before 2.5): the XLA launcher starts one process per device and passes the index first too."""
    if not isinstance(node, cst.Call) or has_star_or_splat(node):
        return False
    name = dotted(node.func)
    if name is None or name.rsplit(".", 1)[-1] != "spawn":
        return False  # start_processes: a human
    b.applicability = UNSAFE  # the process count now comes from the runtime, not the script
    params = {}
    spawn_params = (("fn", None), ("args", None), ("nprocs", None), ("join", True), ("daemon", False),
                    ("start_method", None))
    for i, (param, default) in enumerate(spawn_params):
        index = arg_index(node, param, i)
        if index is not None:
            params[param] = node.args[index].value
        if param in ("join", "daemon") and param in params and not _literal(params[param], default):
            return False  # join=False / daemon=True: no such option on the XLA launcher
    if "fn" not in params or len(node.args) != len(params):
        return False
    if b.ctx.settings.target_version >= (2, 5):
        launcher = b.ref("torch_xla", "launch")
    else:
        launcher = b.ref("torch_xla.distributed.xla_multiprocessing", "spawn")
    if launcher is None:
        return False
    new_args = [cst.Arg(params["fn"])]
    for key in ("args", "start_method"):
        if key in params:
            new_args.append(kwarg(key, params[key]))
    for i in range(len(new_args) - 1):
        new_args[i] = new_args[i].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    b.edit(node, lambda c: c.with_changes(func=expr(launcher), args=new_args,
                                          whitespace_before_args=cst.SimpleWhitespace("")), "launcher")
    return True


def has_star_or_splat(call) -> bool:
    return any(a.star for a in call.args)


# -- XLA2 --------------------------------------------------------------------------------

# -- XLA3 --------------------------------------------------------------------------------

@fixes("XLA304")
def _drop_last(b, node):
    if not isinstance(node, cst.Call):
        return False
    b.applicability = UNSAFE  # the last samples of each epoch are no longer seen
    b.edit(node, lambda c: set_param(c, "drop_last", 8, cst.Name("True")), "drop last")
    return True


def _parallel_loader_parts(b, call):
    """``pl.ParallelLoader(loader, [dev], **keywords)``: (the loader, the one device, the
    other keyword arguments), or None for any other spelling (more devices, a star)."""
    loader = device_list = None
    rest = []
    for i, a in enumerate(call.args):
        if a.star:
            return None
        name = a.keyword.value if a.keyword is not None else None
        if name is None and i == 0 or name == "loader":
            loader = a.value
        elif name is None and i == 1 or name == "devices":
            device_list = a.value
        elif name is None:
            return None
        else:
            rest.append(a)
    if loader is None or not isinstance(device_list, (cst.List, cst.Tuple)) or len(device_list.elements) != 1 \
            or isinstance(device_list.elements[0], cst.StarredElement):
        return None
    return loader, device_list.elements[0].value, rest


def _asks_device(b, call, device) -> bool:
    """``call`` is ``x.per_device_loader(d)`` with ``d`` written as ``device`` is."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) \
            or call.func.attr.value != "per_device_loader" or len(call.args) != 1:
        return False
    a = call.args[0]
    if a.star or (a.keyword is not None and a.keyword.value != "device"):
        return False
    code = b.ctx.module.code_for_node
    return code(a.value) == code(device)


def _function_of_node(b, node):
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
        node = b.ctx.parent(node)
    return node


def _inside(b, node, owner) -> bool:
    """``node`` lies in ``owner`` (a function, with the functions and lambdas nested in it,
    or the module)."""
    while node is not None:
        if node is owner:
            return True
        node = b.ctx.parent(node)
    return False


@fixes("XLA306")
def _mp_device_loader(b, node):
    """``pl.ParallelLoader(loader, [dev]).per_device_loader(dev)`` -> ``pl.MpDeviceLoader(loader,
    dev)``; ``para = pl.ParallelLoader(loader, [dev])`` -> ``para = pl.MpDeviceLoader(loader,
    dev)`` with each ``para.per_device_loader(dev)`` of its function -> ``para``."""
    if not isinstance(node, cst.Call):
        return False
    parts = _parallel_loader_parts(b, node)
    if parts is None:
        return False
    loader, device, rest = parts
    attr = b.ctx.parent(node)
    asked = b.ctx.parent(attr) if isinstance(attr, cst.Attribute) and attr.value is node else None
    uses = []
    if asked is not None:
        if not _asks_device(b, asked, device):
            return False
        target = asked
    else:  # para = pl.ParallelLoader(...): every other read of para asks the same device
        assign = b.ctx.parent(node)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
                or not isinstance(assign.targets[0].target, cst.Name):
            return False
        name = assign.targets[0].target
        func = _function_of_node(b, assign)
        for n in b.ctx.names(name.value):  # (also in nested functions: a closure reads it too)
            if n is name or not _inside(b, n, func):
                continue
            a = b.ctx.parent(n)
            if not (isinstance(a, cst.Attribute) and a.value is n and _asks_device(b, b.ctx.parent(a), device)):
                return False
            uses.append(b.ctx.parent(a))
        if not uses:
            return False
        target = node
    fn = b.ref("torch_xla.distributed.parallel_loader", "MpDeviceLoader")
    if fn is None:
        return False
    args = [cst.Arg(loader), cst.Arg(device)] + [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in rest]
    b.edit(target, lambda _: cst.Call(func=expr(fn), args=args), "mp device loader")
    for use in uses:
        b.edit(use, lambda c: c.func.value if isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute) else c,
               "per device loader")
    return True


@fixes("XLA110")
def _runtime_world_size(b, node):
    """``torch.cuda.device_count()`` -> ``xr.world_size()`` (``xm.xrt_world_size()`` before
    2.1) where the rule says so: in launched code or a script without a multi-process launch.
    In the launching process it stays (asking the runtime there would start it before the
    launch: XLA003), and under SPMD (devices or hosts: the user's call)."""
    if not isinstance(node, cst.Call):
        return False
    if b.ctx.settings.target_version >= (2, 1):
        module, name, shown = "torch_xla.runtime", "world_size", "xr.world_size()"
    else:
        module, name, shown = "torch_xla.core.xla_model", "xrt_world_size", "xm.xrt_world_size()"
    if not b.finding.message.endswith(f"; use {shown}"):
        return False  # the launching process, or SPMD (which count is meant is the user's call)
    fn = b.ref(module, name)
    if fn is None:
        return False
    b.edit(node, lambda _: expr(f"{fn}()"), "world size")
    return True


# -- XLA7: precision ---------------------------------------------------------------------

@fixes("XLA706")
def _bfloat16(b, node):
    """``torch.float16`` / ``torch.half`` -> ``torch.bfloat16`` (the root kept: ``th.half`` ->
    ``th.bfloat16``), ``"float16"`` -> ``"bfloat16"``, ``x.half`` (of ``x.half()``) ->
    ``x.bfloat16``; a dtype held in a name is left for a human."""
    if isinstance(node, cst.Attribute) and node.attr.value in ("float16", "half"):
        b.applicability = UNSAFE  # 8 bits of mantissa instead of 11; fp16-specific code changes
        b.edit(node, lambda a: a.with_changes(attr=cst.Name("bfloat16")), "bfloat16")
        return True
    if isinstance(node, cst.SimpleString) and string_value(node) is not None:
        b.applicability = UNSAFE
        literal = string("bfloat16", quote_of(node))
        b.edit(node, lambda _: literal, "bfloat16")
        return True
    return False


# -- XLA4: devices -----------------------------------------------------------------------

def _literal_device(node) -> bool:
    """A device written as literals only (a string, an f-string, a conditional of them)."""
    if isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.IfExp):
        return _literal_device(node.body) and _literal_device(node.orelse)
    return False


def _names_cuda(node) -> bool:
    """A string literal that names a CUDA device (``"cuda"``, ``"cuda:0"``, ``f"cuda:{i}"``)."""
    if isinstance(node, cst.ConcatenatedString):
        return _names_cuda(node.left)
    if isinstance(node, cst.FormattedString):
        first = node.parts[0] if node.parts else None
        return isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda")
    value = string_value(node)
    return value is not None and value.startswith("cuda")


def _all_cuda(node) -> bool:
    """Does every branch name a CUDA device, or does the condition ask for CUDA
    (``"cuda" if torch.cuda.is_available() else "cpu"``: on a TPU host it picks the CPU, so
    the whole choice becomes the XLA device)?"""
    if isinstance(node, cst.IfExp):
        if _asks_for_cuda(node.test) and (_all_cuda(node.body) or _all_cuda(node.orelse)):
            return True
        return _all_cuda(node.body) and _all_cuda(node.orelse)
    return _names_cuda(node)


def _asks_for_cuda(test) -> bool:
    """Does the condition read ``torch.cuda.*`` (``torch.cuda.is_available()``, ``device_count()``)?"""
    found = []

    class _Find(cst.CSTVisitor):
        def visit_Attribute(self, node):
            name = dotted(node)
            if name is not None and (name == "torch.cuda" or name.startswith("torch.cuda.")):
                found.append(node)
            return not found

    test.visit(_Find())
    return bool(found)


def _on_device(node, dev: str):
    """``node`` (a device written as literals, ``_literal_device``) with each literal that
    names a CUDA device replaced by ``dev``; the others (``"cpu"`` in ``"cuda" if c else
    "cpu"``) stay, so the branch that did not use CUDA still does not; all CUDA: ``dev``."""
    if _all_cuda(node):
        return expr(dev)
    if isinstance(node, cst.IfExp):
        return node.with_changes(body=_on_device(node.body, dev), orelse=_on_device(node.orelse, dev))
    return expr(dev) if _names_cuda(node) else node


def _literal_to_device(b, node) -> bool:
    """Replace the CUDA literals of the device ``node`` (``_literal_device``) with the XLA device."""
    dev = b.device()
    if dev is None:
        return False
    b.edit(node, lambda n: _on_device(n, dev), "literal device")
    return True


def _replace_with(b, node, text_fn) -> bool:
    text = text_fn()
    if text is None:
        return False
    b.edit(node, lambda _: expr(text), "replace")
    return True


def _first_arg_to_device(b, call) -> bool:
    dev = b.device()
    if dev is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return False
    b.edit(call, lambda c: set_value(c, 0, expr(dev)), "device arg")
    return True


@fixes("XLA401")
def _cuda(b, node):
    message = b.finding.message
    if message.startswith(".cuda()") and isinstance(node, cst.Call):
        dev = b.device()
        positional = positional_indices(node)
        if dev is None or len(positional) > 1 or any(a.star for a in node.args):
            return False

        def fn(c):
            if not isinstance(c.func, cst.Attribute):
                return c
            i = arg_index(c, "device", 0)
            if i is not None:
                c = remove_arg(c, i)
            c = c.with_changes(func=c.func.with_changes(attr=cst.Name("to")))
            return insert_arg(c, 0, cst.Arg(expr(dev))) if c.args else append_arg(c, cst.Arg(expr(dev)))
        b.edit(node, fn, "cuda")
        return True
    if message.startswith('.to("cuda")') and isinstance(node, cst.Call):
        first = node.args[0] if node.args and node.args[0].keyword is None and not node.args[0].star else None
        if first is not None and isinstance(first.value, cst.IfExp):  # "cuda" if c else "cpu"
            return _literal_device(first.value) and _literal_to_device(b, first.value)
        return _first_arg_to_device(b, node)
    if message.startswith('device="cuda"'):
        return _literal_device(node) and _literal_to_device(b, node)
    if message.startswith('torch.device("cuda")') and isinstance(node, cst.Call):
        if any(isinstance(a.value, cst.IfExp) for a in node.args):
            return False  # torch.device("cuda" if c else "cpu"): the CPU branch needs its torch.device
        return _replace_with(b, node, b.device)
    if message.startswith("torch.cuda.synchronize()") and isinstance(node, cst.Call):
        if b.ctx.settings.target_version >= (2, 5):
            return _replace_with(b, node, lambda: (lambda f: f and f"{f}(wait=True)")(b.ref("torch_xla", "sync")))
        return _replace_with(b, node, lambda: (lambda f: f and f"{f}()")(b.ref("torch_xla.core.xla_model", "wait_device_ops")))
    if message.startswith(("torch.cuda.set_device()", "torch.cuda.empty_cache()")) and isinstance(node, cst.Call):
        return drop_statement(b, node)
    return False  # map_location, set_default_device, current_device, `with torch.cuda.device()`: a human


@fixes("XLA406")
def _import_torch_xla(b, node):
    # the import registers the device; the device strings stay ("xla" is torch_xla.device()'s type).
    # Unsafe: the module now needs torch_xla installed to import at all
    b.applicability = UNSAFE
    if "torch_xla" not in b.ctx.imports.existing:
        b.needs.append(("torch_xla", "!import torch_xla"))
    return True


def _continues(body) -> bool:
    """A ``continue`` of this loop in ``body`` (not in a nested loop, function or class)."""
    todo = [body]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Continue):
            return True
        if isinstance(node, (cst.For, cst.While)):
            todo.append(node.orelse) if node.orelse is not None else None
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        todo.extend(node.children)
    return False


@fixes("XLA508")
def _sync_each_iteration(b, node):
    # `torch_xla.sync()` (xm.mark_step() before 2.4, as the message says) as the loop body's last
    # statement; not where an iteration can end elsewhere (`continue`) or the body ends in a jump
    if not isinstance(node, (cst.For, cst.While)) or not isinstance(node.body, cst.IndentedBlock) \
            or not node.body.body or _continues(node.body):
        return False
    last = node.body.body[-1]
    if isinstance(last, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Break, cst.Return, cst.Raise, cst.Continue)) for s in last.body):
        return False
    fn = _sync_ref(b)
    if fn is None:
        return False
    b.insert(last, "after", lambda: f"{fn}()", "sync each iteration")
    return True


def _sync_ref(b):
    """How the module names the per-step sync for the target release: ``torch_xla.sync`` from
    2.4, ``xm.mark_step`` before (as the rules' messages say); None when it cannot be named."""
    if b.ctx.settings.target_version >= (2, 4):
        return b.ref("torch_xla", "sync")
    return b.ref("torch_xla.core.xla_model", "mark_step")


@fixes("XLA605")
def _sync_before_save(b, node):
    # `torch_xla.sync()` (xm.mark_step() before 2.4, as the rule's message says) on its own line
    # just before the statement of the save, in its block (inside a step gate: only when saving)
    stmt = b.ctx.statement_of(node)
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    fn = _sync_ref(b)
    if fn is None:
        return False
    b.insert(stmt, "before", lambda: f"{fn}()", "sync before save")
    return True


@fixes("XLA402")
def _rank_device(b, node):
    message = b.finding.message
    if message.startswith(".to(") and isinstance(node, cst.Call):
        return _first_arg_to_device(b, node)
    if message.startswith(("xm.xla_device(", "torch_xla.device(", "torch.device(")) and isinstance(node, cst.Call):
        return _replace_with(b, node, b.device)
    if message.startswith("device="):
        return _replace_with(b, node, b.device)
    if message.startswith("xla:<rank>"):
        arg, call = _parent_call(b, node)
        if call is not None and dotted(call.func) in ("torch.device",) and len(call.args) == 1:
            return _replace_with(b, call, b.device)
        return _replace_with(b, node, b.device)
    return False


# -- XLA8: renamed and removed APIs ------------------------------------------------------

def _no_args(call):
    return call if not call.args else None


def _same(call):
    return call


def _xla_device_args(call):
    """``xm.xla_device(n, devkind)`` -> ``torch_xla.device(index)``; devkind is ignored from 2.8."""
    if any(a.star for a in call.args) or len(positional_indices(call)) > 1:
        return None
    for name in ("devkind",):
        i = keyword_index(call, name)
        if i is not None:
            call = remove_arg(call, i)
    i = keyword_index(call, "n")
    if i is not None:
        call = set_value(call, i, call.args[i].value)
        args = list(call.args)
        args[i] = args[i].with_changes(keyword=cst.Name("index"))
        call = call.with_changes(args=args)
    if any(a.keyword is not None and a.keyword.value != "index" for a in call.args):
        return None
    return call


_RUNTIME_NAMES = ("world_size", "global_ordinal", "local_ordinal", "device_type", "addressable_device_count",
                  "global_device_count", "local_process_count", "local_device_count")


def _renames(settings):
    """qualname -> (module, attribute, argument policy) of the one-to-one replacements."""
    device = ("torch_xla", "device", _xla_device_args) if settings.target_version >= (2, 3) \
        else ("torch_xla.core.xla_model", "xla_device", _same)
    table = {
        "torch_xla.core.xla_model.xrt_world_size": ("torch_xla.runtime", "world_size", _no_args),
        "torch_xla.core.xla_model.get_ordinal": ("torch_xla.runtime", "global_ordinal", _no_args),
        "torch_xla.core.xla_model.parse_xla_device": ("torch_xla._internal.utils", "parse_xla_device", _same),
        "torch_xla.core.xla_model.xla_device": device,
        "torch_xla.runtime.xla_device": device,
        "torch_xla.core.xla_model.mark_step": ("torch_xla", "sync", _same),
        "torch_xla.experimental.compile": ("torch_xla", "compile", _same),
        "torch_xla.experimental.eager.compile": ("torch_xla", "compile", _same),
        "torch_xla.experimental.pjrt.xla_device": device,
        "torch_xla.experimental.pjrt.broadcast_master_param":
            ("torch_xla.core.xla_model", "broadcast_master_param", _same),
    }
    for name in _RUNTIME_NAMES:
        table[f"torch_xla.experimental.pjrt.{name}"] = ("torch_xla.runtime", name, _same)
    return {q: r for q, r in table.items() if _exists(r[0], r[1], settings)}


def _exists(module, attr, settings) -> bool:
    """Does the target release have ``module.attr`` (per the API table; untracked modules count)?"""
    versions = api_table.name_versions(module, attr)
    return versions is None or "%d.%d" % settings.target_version in versions


_SHORT = {"xm.": "torch_xla.core.xla_model.", "xr.": "torch_xla.runtime.", "xmp.": "torch_xla.distributed.xla_multiprocessing.",
          "pl.": "torch_xla.distributed.parallel_loader.", "xs.": "torch_xla.distributed.spmd."}


def _qualname(display: str) -> str:
    for short, full in _SHORT.items():
        if display.startswith(short):
            return full + display[len(short):]
    return display


def _rename_use(b, node, rename) -> bool:
    """Rewrite one reference (a Name or Attribute) to the replacement; a call's arguments
    follow the replacement's policy."""
    module, attr, policy = rename
    parent = b.ctx.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        if policy(parent) is None:
            return False
        new = b.ref(module, attr)
        if new is None:
            return False
        b.edit(parent, safe_edit(lambda c: policy(c.with_changes(func=expr(new)))), "rename call")
        return True
    if policy is _no_args and isinstance(parent, cst.Call):
        return False
    new = b.ref(module, attr)
    if new is None:
        return False
    b.edit(node, lambda _: expr(new), "rename")
    return True


def _alias_parts(b, alias):
    """(full dotted name, local name or None for a plain ``import a.b``, the statement)."""
    stmt = b.ctx.parent(alias)
    name = dotted(alias.name)
    if isinstance(stmt, cst.ImportFrom):
        if stmt.relative or stmt.module is None:
            return None, None, stmt
        local = alias.asname.name.value if alias.asname else alias.name.value
        return f"{dotted(stmt.module)}.{name}", local, stmt
    local = alias.asname.name.value if alias.asname else None
    return name, local, stmt


def _guarded(b, node) -> bool:
    """Is ``node`` under a ``try:`` or an ``if`` (an import there may be an availability probe)?"""
    node = b.ctx.parent(node)
    while node is not None and not isinstance(node, cst.Module):
        if isinstance(node, (cst.Try, cst.TryStar, cst.If)):
            return True
        node = b.ctx.parent(node)
    return False


def _kept_import(b, node) -> bool:
    """Is the import ``node`` on a line whose ``# noqa`` keeps it (suppresses F401)? The
    import then stays (``Imports.finish``), so a fix that needs it gone must not start."""
    line = b.ctx.statement_of(node)
    return isinstance(line, cst.SimpleStatementLine) and noqa_suppresses(line, "F401")


def _uses_of_module(b, full, local):
    """The ``X`` nodes of every ``<module>.X`` in the module: (attribute node, X); None when
    the module is used another way (passed around, rebound)."""
    out = []
    if local is not None:
        if b.ctx.imports.rebound.get(local):
            return None
        for use in b.ctx.names(local):
            parent = b.ctx.parent(use)
            if not (isinstance(parent, cst.Attribute) and parent.value is use):
                return None
            out.append((parent, parent.attr.value))
        return out
    for node in b.ctx.positions:
        if isinstance(node, cst.Attribute) and dotted(node) == full:
            parent = b.ctx.parent(node)
            if not (isinstance(parent, cst.Attribute) and parent.value is node):
                return None
            out.append((parent, parent.attr.value))
    return out


@fixes("XLA801", "XLA802", "XLA803", "XLA804", "XLA805", "XLA806", "XLA808")
def _api_rename(b, node):
    renames = _renames(b.ctx.settings)
    if isinstance(node, cst.ImportAlias):
        full, local, stmt = _alias_parts(b, node)
        if full is None or _guarded(b, node) or _kept_import(b, node):
            return False  # the import must go, and one under try/if may be a probe: a human
        if full in renames:  # `from xm import mark_step`: rewrite every use, drop the name
            if local is None or b.ctx.imports.rebound.get(local):
                return False
            for use in b.ctx.names(local):
                if not _rename_use(b, use, renames[full]):
                    return False
            b.remove_if_unused.append(local)
            return True
        # a removed module (XLA806): every use `mod.X` must have a replacement
        uses = _uses_of_module(b, full, local)
        if uses is None:
            return False
        for attr_node, name in uses:
            rename = renames.get(f"{full}.{name}")
            if rename is None or not _rename_use(b, attr_node, rename):
                return False
        if local is not None:
            b.remove_if_unused.append(local)
        else:
            b.remove_modules.append(full)
        return True
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    display = b.finding.message.split(" ", 1)[0]
    rename = renames.get(_qualname(display))
    return rename is not None and _rename_use(b, node, rename)


SPMD = "torch_xla.distributed.spmd"


@fixes("XLA807")
def _sharding_module(b, node):
    """``torch_xla.experimental.xla_sharding`` / ``xla_sharded_tensor`` -> ``torch_xla.distributed.spmd``
    when every name used from it exists there in the target release."""
    if not isinstance(node, cst.ImportAlias):
        return False
    settings = b.ctx.settings
    full, local, stmt = _alias_parts(b, node)
    if full is None:
        return False
    if isinstance(stmt, cst.ImportFrom) and dotted(stmt.module) in (
            "torch_xla.experimental.xla_sharding", "torch_xla.experimental.xla_sharded_tensor"):
        if isinstance(stmt.names, cst.ImportStar) or not all(_exists(SPMD, a.name.value, settings) for a in stmt.names):
            return False
        b.edit(stmt, lambda s: s.with_changes(module=expr(SPMD)), "module")
        return True
    uses = _uses_of_module(b, full, local)
    if uses is None or not all(_exists(SPMD, name, settings) for _, name in uses):
        return False
    if isinstance(stmt, cst.ImportFrom):  # from torch_xla.experimental import xla_sharding [as xs]
        if len(stmt.names) != 1:
            return False
        asname = cst.AsName(name=cst.Name(local))
        b.edit(node, lambda a: a.with_changes(name=cst.Name("spmd"), asname=asname), "alias")
        b.edit(stmt, lambda s: s.with_changes(module=expr("torch_xla.distributed")), "module")
        return True
    b.edit(node, lambda a: a.with_changes(name=expr(SPMD)), "alias")
    if local is None:  # plain `import torch_xla.experimental.xla_sharding`: its chains too
        for attr_node, _ in uses:
            b.edit(attr_node, lambda a: a.with_changes(value=expr(SPMD)), "chain")
    return True


# -- XLA9: runtime -----------------------------------------------------------------------

_START_LINE = re.compile(r"\(line (\d+)\)")


def _literal_arg(arg) -> bool:
    v = arg.value
    return not arg.star and (isinstance(v, (cst.SimpleString, cst.Integer)) or (
        isinstance(v, cst.Name) and v.value in ("True", "False", "None")))


@fixes("XLA906")
def _use_spmd_first(b, node):
    """Moves the ``xr.use_spmd()`` statement to just before the statement of its block that
    started the runtime (the finding's line): only a statement that is the call alone, with
    literal arguments, whose block holds that line; a start in a caller or a helper's
    caller needs a human."""
    m = _START_LINE.search(b.finding.message)
    if not isinstance(node, cst.Call) or m is None or not all(_literal_arg(a) for a in node.args):
        return False
    stmt = b.ctx.statement_of(node)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
            or not isinstance(stmt.body[0], cst.Expr) or stmt.body[0].value is not node:
        return False
    anchor = b.ctx.nearest_sibling(stmt, frozenset({int(m.group(1))}), after=False)
    if anchor is None:
        return False
    b.applicability = UNSAFE  # the code between now runs under SPMD (one virtual device)
    text = b.ctx.module.code_for_node(node)
    b.insert(anchor, "before", lambda: text, "use_spmd first")
    return drop_statement(b, node)


@fixes("XLA909")
def _mark_sharding_alone(b, node):
    """``x = xs.mark_sharding(x, mesh, spec)`` -> ``xs.mark_sharding(x, mesh, spec)``: only an
    assignment statement alone on its line whose one target is, as written, the call's
    first argument; the result used in an expression needs a human."""
    if not isinstance(node, cst.Call) or not node.args or node.args[0].keyword is not None or node.args[0].star:
        return False
    assign = b.ctx.parent(node)
    line = b.ctx.parent(assign)
    if not isinstance(assign, cst.Assign) or assign.value is not node or len(assign.targets) != 1 \
            or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return False
    code = b.ctx.module.code_for_node
    if code(assign.targets[0].target) != code(node.args[0].value):
        return False
    b.applicability = UNSAFE  # the name stays the annotated tensor (the wrapper's attributes are gone)
    b.edit(assign, lambda a: cst.Expr(value=a.value, semicolon=a.semicolon), "alone")
    return True

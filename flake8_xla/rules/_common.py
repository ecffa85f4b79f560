"""Small helpers shared by the rule families (queries on the model, wording by version)."""

from __future__ import annotations

import ast

from ..model import UNKNOWN, Ctx, Model
from ..settings import Settings

RANK_NAMES = frozenset({"rank", "local_rank", "global_rank", "ordinal", "local_ordinal", "global_ordinal"})
RANK_APIS = frozenset({
    "torch_xla.runtime.global_ordinal", "torch_xla.runtime.local_ordinal",
    "torch_xla.core.xla_model.get_ordinal", "torch_xla.core.xla_model.get_local_ordinal",
    "torch.distributed.get_rank", "torch.distributed.get_node_local_rank",
})

SHORT_MODULES = (
    ("torch_xla.core.xla_model.", "xm."),
    ("torch_xla.runtime.", "xr."),
    ("torch_xla.distributed.xla_multiprocessing.", "xmp."),
    ("torch_xla.distributed.parallel_loader.", "pl."),
    ("torch_xla.distributed.spmd.", "xs."),
)


def short_name(qualname: str) -> str:
    """``torch_xla.core.xla_model.mark_step`` -> ``xm.mark_step`` (the docs' aliases)."""
    for prefix, short in SHORT_MODULES:
        if qualname.startswith(prefix):
            return short + qualname[len(prefix):]
    return qualname


def at_least(settings: Settings, version: str) -> bool:
    major, minor = (int(p) for p in version.split("."))
    return settings.target_version >= (major, minor)


def device_call(settings: Settings) -> str:
    """The documented way to get this process's XLA device in the target version."""
    return "torch_xla.device()" if at_least(settings, "2.3") else "xm.xla_device()"


def launch_call(settings: Settings) -> str:
    return "torch_xla.launch(fn, args=...)" if at_least(settings, "2.5") else "xmp.spawn(fn, args=...)"


def init_method(settings: Settings) -> str:
    return "xla://" if at_least(settings, "2.1") else "pjrt://"


def runtime_api(settings: Settings, what: str) -> str:
    """``xr.world_size()`` and friends, or their pre-2.1 spelling."""
    new = {"WORLD_SIZE": "xr.world_size()", "RANK": "xr.global_ordinal()", "LOCAL_RANK": "xr.local_ordinal()",
           "LOCAL_WORLD_SIZE": "xr.local_process_count()"}
    old = {"WORLD_SIZE": "xm.xrt_world_size()", "RANK": "xm.get_ordinal()", "LOCAL_RANK": "xm.get_local_ordinal()",
           "LOCAL_WORLD_SIZE": "xm.xrt_world_size()"}
    return new[what] if at_least(settings, "2.1") else old[what]


def render(expr) -> str:
    """A short source-like rendering of a small expression (names, attributes, constants)."""
    if expr is None or expr is UNKNOWN:
        return "..."
    parts = []
    node = expr
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        text = ".".join([node.id] + list(reversed(parts)))
        return text if len(text) <= 30 else text[:29] + "\u2026"  # messages quote at most 30 characters
    if type(node) is ast.Constant and not parts:
        text = repr(node.value)
        return text if len(text) <= 30 else text[:27] + "..."
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant and not parts:
        return "-" + repr(node.operand.value)
    return "..."


def source_text(expr, limit: int = 30) -> str:
    """``expr`` as source (``ast.unparse``), cut to ``limit`` characters with an ellipsis:
    ``nprocs=POD_CORES // HOST_CORES`` rather than ``nprocs=...``."""
    if expr is None or expr is UNKNOWN:
        return "..."
    try:
        text = ast.unparse(expr)
    except Exception:  # a malformed tree from some host: never crash the message
        return render(expr)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def is_rank_value(model: Model, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
    """True when ``expr`` holds a process rank/ordinal (an integer naming a replica).

    The first parameter of a launched target (the launcher passes the global ordinal), a
    name conventionally holding a rank (``rank``, ``local_rank``, ...), or a value
    assigned from a rank API (``xr.global_ordinal()``, ``dist.get_rank()``,
    ``int(os.environ["LOCAL_RANK"])``).
    """
    if _depth > 8:
        return False
    node = expr
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "int" and node.args:
        node = node.args[0]
    t = type(node)
    if t is ast.Name:
        bindings = model.lookup(node.id, ctx, getattr(node, "lineno", None))
        if bindings and all(kind == "param" for _, kind, _, _ in bindings):
            target = bindings[0][2]
            if target is not None and model.is_launch_index(target, node.id):
                return True
        if node.id.lower() in RANK_NAMES:
            return True
    elif t is ast.Attribute and node.attr.lower() in RANK_NAMES:
        return True
    if t is ast.Call:
        if model.call_name(node, ctx) in RANK_APIS:
            return True
        if model.call_name(node, ctx) in ("os.environ.get", "os.getenv"):
            key = model.const(node.args[0], ctx) if node.args else UNKNOWN
            return key in ("RANK", "LOCAL_RANK")
    if t is ast.Subscript and model.qualname(node.value, ctx) == "os.environ":
        return model.const(node.slice, ctx) in ("RANK", "LOCAL_RANK")
    if t in (ast.Name, ast.Attribute):
        values = model.values(node, ctx)
        if values and len(values) == 1:
            value, vctx = values[0]
            if value is not expr and type(value) in (ast.Call, ast.Subscript):
                return is_rank_value(model, value, vctx, _depth + 1)
    return False


def str_value(model: Model, expr, ctx: Ctx):
    """A string constant (following simple names), or the literal head of an f-string; else None."""
    if expr is None or expr is UNKNOWN:
        return None
    if type(expr) is ast.JoinedStr:
        head = expr.values[0] if expr.values else None
        if type(head) is ast.Constant and isinstance(head.value, str):
            return head.value
        return None
    value = model.const(expr, ctx)
    return value if isinstance(value, str) else None


XLA_DEVICE_CALLS = frozenset({"torch_xla.device", "torch_xla.core.xla_model.xla_device", "torch_xla.runtime.xla_device"})


def device_leaves(model: Model, expr, ctx: Ctx) -> list | None:
    """What a device expression may be: both arms of a conditional, every assignment of a
    name or ``self.`` attribute; None if unknown."""
    out = []
    todo = [(expr, ctx, 0)]
    while todo:
        e, c, depth = todo.pop()
        if e is None or e is UNKNOWN or depth > 8 or len(out) > 16:
            return None
        if type(e) is ast.IfExp:
            todo.append((e.body, c, depth + 1))
            todo.append((e.orelse, c, depth + 1))
            continue
        if type(e) in (ast.Name, ast.Attribute) and model.qualname(e, c) is None:
            vals = model.values(e, c)
            if not vals:
                return None
            todo.extend((v, vc, depth + 1) for v, vc in vals)
            continue
        out.append((e, c))
    return out


def _is_xla_device(model: Model, expr, ctx: Ctx) -> bool:
    if type(expr) is ast.Call:
        q = model.call_name(expr, ctx)
        if q in XLA_DEVICE_CALLS:
            return True
        if q == "torch.device" and expr.args:
            text = str_value(model, expr.args[0], ctx)
            return text is not None and text.startswith("xla")
        return False
    text = str_value(model, expr, ctx)
    return text is not None and text.startswith("xla")


def is_cuda_string(model: Model, expr, ctx: Ctx) -> bool:
    """``"cuda"``, ``"cuda:0"``, ``f"cuda:{rank}"``, ``"cuda" if ... else "cpu"``, or a name
    bound to such values; False when any possible value is an XLA device (the code picks
    XLA when it runs under XLA) or a value cannot be seen."""
    leaves = device_leaves(model, expr, ctx)
    if not leaves or any(_is_xla_device(model, e, c) for e, c in leaves):
        return False
    for e, c in leaves:
        text = str_value(model, e, c)
        if text is not None and (text == "cuda" or text.startswith("cuda:")):
            return True
    return False

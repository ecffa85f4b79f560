"""The fixes that port a script's structure (all unsafe): the process group (XLA103), ranks
from the runtime (XLA109), the optimizer step and reduce-then-clip (XLA201, XLA203), the device loader (XLA301), the
distributed sampler (XLA303), the model on the device (XLA404) and the optimizer after
the move (XLA405).

They add, move or drop whole statements (``Builder.insert`` / ``move_after``); a fix that
meets a shape it cannot rewrite with the same meaning returns False and leaves the
finding to a human.
"""

from __future__ import annotations

import ast
import bisect
import re

import libcst as cst

from ..model.data import DISTRIBUTED_SAMPLERS
from . import UNSAFE
from .common import drop_statement, fixes, safe_edit, xla_init_method
from .edits import (append_arg, arg_index, dotted, expr, keyword_index, kwarg, positional_indices, quote_of,
                    set_value, string, string_value)

OPTIMIZER_STEP = "torch_xla.core.xla_model.optimizer_step"
CLIPS = ("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_",
         "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_value_")


def _code(b, node) -> str:
    return b.ctx.module.code_for_node(node)


def _lines(b, node) -> tuple[int, int]:
    r = b.ctx.position(node)
    return (r.start.line, r.end.line) if r is not None else (0, 0)


def _runtime(b, what: str) -> str | None:
    """``xr.world_size()`` and friends as the target release spells them (None: no such API)."""
    if b.ctx.settings.target_version >= (2, 1):
        name = {"WORLD_SIZE": "world_size", "RANK": "global_ordinal", "LOCAL_RANK": "local_ordinal",
                "LOCAL_WORLD_SIZE": "local_process_count"}[what]
        fn = b.ref("torch_xla.runtime", name)
    else:
        name = {"WORLD_SIZE": "xrt_world_size", "RANK": "get_ordinal", "LOCAL_RANK": "get_local_ordinal"}.get(what)
        fn = b.ref("torch_xla.core.xla_model", name) if name else None
    return f"{fn}()" if fn else None


class _Bound(cst.CSTVisitor):
    """The names a statement binds (assignment targets, loop and ``with`` targets, ``del``,
    walrus, ``def``/``class``/``import``) and the names it reads."""

    def __init__(self):
        self.bound: set[str] = set()
        self.read: set[str] = set()

    def _targets(self, node):
        for n in _walk(node):
            if isinstance(n, cst.Name):
                self.bound.add(n.value)

    def visit_AssignTarget(self, node):
        self._bind_target(node.target)

    def _bind_target(self, target):
        if isinstance(target, cst.Name):
            self.bound.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._bind_target(el.value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value)

    def visit_AugAssign(self, node):
        self._bind_target(node.target)

    def visit_AnnAssign(self, node):
        self._bind_target(node.target)

    def visit_For(self, node):
        self._bind_target(node.target)

    def visit_CompFor(self, node):
        self._bind_target(node.target)

    def visit_AsName(self, node):
        self._bind_target(node.name)

    def visit_NamedExpr(self, node):
        self._bind_target(node.target)

    def visit_Del(self, node):
        self._bind_target(node.target)

    def visit_FunctionDef(self, node):
        self.bound.add(node.name.value)

    def visit_ClassDef(self, node):
        self.bound.add(node.name.value)

    def visit_ImportAlias(self, node):
        if node.asname is None:
            self.bound.add((dotted(node.name) or "").split(".")[0])

    def visit_Global(self, node):
        for item in node.names:
            self.bound.add(item.name.value)

    def visit_Name(self, node):
        self.read.add(node.value)


def _walk(node):
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(n.children)


def _names_of(node) -> _Bound:
    v = _Bound()
    node.visit(v)
    return v


def _siblings(b, stmt):
    """(the block's statements, the index of ``stmt``) or (None, None)."""
    return b.ctx.siblings(stmt)


def _single_expr_call(stmt):
    """The call of a statement line that is just ``call(...)``."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(stmt.body[0].value, cst.Call):
        return stmt.body[0].value
    return None


# -- XLA103: the XLA process group ---------------------------------------------------------

INIT_PG = ("torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group")

_REGISTERING = ("torch_xla.distributed.xla_backend", "torch_xla.distributed.xla_multiprocessing",
                "torch_xla.experimental.pjrt_backend", "torch_xla.experimental.pjrt", "torch_xla._internal.pjrt",
                "torch_xla._internal.rendezvous")


@fixes("XLA103")
def _xla_process_group(b, node):
    """``init_process_group("gloo", rank=r, world_size=n)`` -> ``init_process_group("xla",
    init_method="xla://")``; a ``MASTER_ADDR`` / ``MASTER_PORT`` write statement is dropped."""
    b.applicability = UNSAFE  # the rendezvous now comes from the runtime, not from the script
    message = b.finding.message
    if message.startswith(("MASTER_ADDR", "MASTER_PORT")):
        model = b.ctx.model
        if not model.calls_to(*INIT_PG):
            return False  # no process group takes the rendezvous over: a human
        return _drop_env_write(b, node)
    if not isinstance(node, cst.Call) or any(a.star for a in node.args) or len(positional_indices(node)) > 2:
        return False
    if any(a.keyword is not None and a.keyword.value == "store" for a in node.args):
        return False  # a TCPStore of its own: a human
    i = arg_index(node, "backend", 0)
    if i is None or string_value(node.args[i].value) not in ("gloo", "nccl", "mpi"):
        return False  # a backend held in a variable: a human
    literal = string("xla", quote_of(node.args[i].value))
    if not xla_init_method(b, node):  # init_method="xla://", rank/world_size dropped
        return False
    version = b.ctx.settings.target_version
    if (2, 1) <= version < (2, 5) and not any(
            m == r or m.startswith(r + ".") for m in b.ctx.imports.existing for r in _REGISTERING):
        b.needs.append(("torch_xla.distributed.xla_backend", "!import torch_xla.distributed.xla_backend"))

    def backend(c):
        j = arg_index(c, "backend", 0)
        return None if j is None else set_value(c, j, literal)
    b.edit(node, safe_edit(backend), "backend")
    return True


def _drop_env_write(b, node) -> bool:
    if isinstance(node, cst.Call):
        return drop_statement(b, node)
    target = b.ctx.parent(node)
    assign = b.ctx.parent(target)
    if not isinstance(node, cst.Subscript) or not isinstance(target, cst.AssignTarget) \
            or not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
            or not isinstance(b.ctx.parent(assign), cst.SimpleStatementLine):
        return False  # os.environ.update({...}), a chained assignment: a human
    b.edit(assign, lambda _: cst.RemovalSentinel.REMOVE, "drop")
    return True


# -- XLA109: ranks and world sizes from the runtime ---------------------------------------------

_ENV_READ = re.compile(r'^os\.environ\["(\w+)"\]')  # the key the rule resolved (names and constants too)
_HARD_CODED = re.compile(r"^hard-coded (world_size|num_replicas)=")


def _is_rank_argument(b, node) -> bool:
    """``node`` (or ``int(node)``) is the value of a ``rank=`` argument."""
    parent = b.ctx.parent(node)
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = b.ctx.parent(parent)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "int":
            parent = b.ctx.parent(call)
    return isinstance(parent, cst.Arg) and parent.keyword is not None and parent.keyword.value == "rank"


@fixes("XLA109")
def _runtime_ranks(b, node):
    """``os.environ["RANK"]`` -> ``xr.global_ordinal()`` (an int where the read was a string);
    a literal ``world_size=8`` / ``num_replicas=8`` (or a constant holding it) -> ``xr.world_size()``."""
    b.applicability = UNSAFE  # an int instead of a string; the runtime's count, not the script's
    m = _ENV_READ.match(b.finding.message)
    if m is not None:
        if not isinstance(node, (cst.Subscript, cst.Call)):
            return False
        what = m.group(1)
        if what == "LOCAL_RANK" and _is_rank_argument(b, node):
            # `DistributedSampler(ds, num_replicas=world, rank=LOCAL_RANK)`: a rank among all
            # replicas is the global ordinal (the local one repeats on every host of a pod)
            what = "RANK"
        text = _runtime(b, what)
        if text is None:
            return False
        b.edit(node, lambda _: expr(text), "runtime")
        return True
    if _HARD_CODED.match(b.finding.message) and isinstance(node, cst.Call):
        text = _runtime(b, "WORLD_SIZE")
        if text is None:
            return False

        rank = None
        call = b.ctx.ast_node(node)
        if call is not None and b.ctx.model.call_name(call, b.ctx.model.call_ctx(call)) in DISTRIBUTED_SAMPLERS \
                and arg_index(node, "rank", 2) is None:
            rank = _runtime(b, "RANK")  # a sampler bound to the runtime's count needs its rank too
            if rank is None:
                return False

        def fn(c):
            for name in ("world_size", "num_replicas"):
                i = keyword_index(c, name)
                value = c.args[i].value if i is not None else None
                if isinstance(value, cst.Integer) or (
                        isinstance(value, (cst.Name, cst.Attribute))  # a constant the rule resolved (= 8)
                        and f"{name}={cst.Module([]).code_for_node(value)} (= " in b.finding.message):
                    c = set_value(c, i, expr(text))
            if rank is not None and arg_index(c, "rank", 2) is None:
                c = append_arg(c, kwarg("rank", expr(rank)))
            return c
        b.edit(node, fn, "world size")
        return True
    return False


# -- XLA203 / XLA201: reduce, clip, step ----------------------------------------------------------

def _clip_lines(b) -> frozenset[int]:
    return b.ctx.memo("clip lines", lambda: frozenset(call.lineno for call, _ in b.ctx.model.calls_to(*CLIPS)))


def _step_lines(b) -> frozenset[int]:
    return b.ctx.memo("step lines", lambda: frozenset(
        call.lineno for call, _ in b.ctx.model.calls_to(OPTIMIZER_STEP)))


def _reduce_before(b, clip_stmt, opt_text: str) -> bool:
    reduce = b.ref("torch_xla.core.xla_model", "reduce_gradients")
    if reduce is None:
        return False
    b.insert(clip_stmt, "before", lambda: f"{reduce}({opt_text})", "reduce " + opt_text)
    return True


@fixes("XLA203")
def _reduce_then_clip(b, node):
    """``clip(...); xm.optimizer_step(opt)`` -> ``xm.reduce_gradients(opt); clip(...);
    opt.step()`` (the clip now sees the averaged gradients, as torch_xla PR #1709 shows).
    The step must follow the clip in the same block (the clip may sit under an ``if`` there:
    the reduction goes before that ``if``, and runs whenever the step does)."""
    if not isinstance(node, cst.Call):
        return False
    b.applicability = UNSAFE  # the clip now clips the reduced gradients: the update changes
    step_lines = _step_lines(b)
    stmt = b.ctx.statement_of(node)
    while stmt is not None:
        if b.ctx.block_of(stmt) is None:
            return False
        later = b.ctx.nearest_sibling(stmt, step_lines, after=True)  # the first that holds a step
        if later is not None:
            call = _single_expr_call(later)
            if call is not None and _lines(b, call)[0] in step_lines:
                return _plain_step(b, stmt, call)
            return False  # the step sits under a branch or loop of its own: a human
        stmt = b.ctx.statement_of(b.ctx.parent(stmt))
    return False


def _plain_step(b, before, call) -> bool:
    """Reduce before ``before``, then ``xm.optimizer_step(opt)`` (``call``) -> ``opt.step()``."""
    if any(a.star for a in call.args):
        return False
    opt_i = arg_index(call, "optimizer", 0)
    others = [a for j, a in enumerate(call.args) if j != opt_i]
    if opt_i is None or any(not (a.keyword is not None and a.keyword.value == "barrier"
                                 and isinstance(a.value, cst.Name) and a.value.value == "False") for a in others):
        return False  # barrier=True, optimizer_args, groups: a human
    opt_text = _code(b, call.args[opt_i].value)
    if not _reduce_before(b, before, opt_text):
        return False
    b.edit(call, lambda _: expr(f"{opt_text}.step()"), "plain step")
    return True


def reduce_before_clip(b, node) -> bool | None:
    """For XLA201: ``clip(...); opt.step()`` -> ``xm.reduce_gradients(opt); clip(...);
    opt.step()`` when a clip precedes the step in its block, maybe under an ``if``
    (``xm.optimizer_step`` would clip unreduced gradients: XLA203). None when no clip
    precedes it."""
    stmt = b.ctx.statement_of(node)
    if not isinstance(stmt, cst.SimpleStatementLine) or b.ctx.block_of(stmt) is None:
        return None
    prev = b.ctx.nearest_sibling(stmt, _clip_lines(b), after=False)  # the last before it holding a clip
    if prev is not None:
        return _reduce_before(b, prev, _code(b, node.func.value))
    return None


# -- XLA301: the device loader ----------------------------------------------------------------

_ITER_WRAPPERS = ("enumerate", "iter", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm")
_COMBINERS = ("zip", "islice", "chain", "cycle", "map", "filter", "zip_longest")


@fixes("XLA301")
def _device_loader(b, node):
    """``for x in loader:`` -> ``for x in pl.MpDeviceLoader(loader, device):`` (also inside
    ``enumerate(...)`` / ``tqdm(...)``); for a loader passed to a training function, that
    function's loop, when every loader reaching it is a plain one. ``device`` is the device
    variable in scope, else the XLA device."""
    b.applicability = UNSAFE  # batches now arrive on the device, and the graph is cut per batch
    if isinstance(node, cst.BaseExpression) and isinstance(b.ctx.parent(node), cst.Arg):
        # a loader passed to a function whose loop trains on it: wrapped in that loop, where
        # only iteration sees it (the function may read `loader.sampler` / `.dataset`)
        node = _callee_loop(b)
        if node is None:
            return False
    if not isinstance(node, cst.For):
        return False  # it = iter(loader); next(it): a human
    line = _lines(b, node)[0]
    # pbar = tqdm(loader); for x in pbar: the loader inside the bar
    bar = _bar_of(b, node.iter.value, line) if isinstance(node.iter, cst.Name) else None
    path = [] if bar is not None else _loader_path(b, node.iter)
    if bar is not None:
        line = _lines(b, bar)[0]
    if path is None:
        return False
    loader = b.ref("torch_xla.distributed.parallel_loader", "MpDeviceLoader")
    device = _known_device(b, line) or _moved_to(b, node) or b.device()
    if loader is None or device is None:
        return False

    def wrap(t):
        return cst.Call(func=expr(loader), args=[
            cst.Arg(t, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(expr(device))])

    def rewrap(e, steps):  # follow enumerate(tqdm(...)) down to the loader on the updated node
        if not steps:
            return wrap(e)
        if not isinstance(e, cst.Call) or not e.args:
            return e
        args = list(e.args)
        args[0] = args[0].with_changes(value=rewrap(args[0].value, steps[1:]))
        return e.with_changes(args=args)

    if bar is not None:  # inside the bar, so that it still counts the steps
        b.edit(bar, lambda c: rewrap(c, [0]), "device loader")
    else:
        # edited on the loop, which is left after the loader itself: another fix on the
        # loader's call (XLA304's drop_last) lands inside the wrap, not on it
        b.edit(node, lambda f: f.with_changes(iter=rewrap(f.iter, path)), "device loader")
    _drop_redundant_moves(b, node, device)
    return True


_TQDM = ("tqdm", "tqdm.tqdm", "tqdm.auto.tqdm")


def _bar_of(b, name: str, line: int):
    """The ``tqdm(loader, ...)`` call (LibCST) that ``name`` is bound to, when that is its one
    binding in the function around ``line`` (or the module), before ``line``, and its first
    argument is a plain loader; else None."""
    functions = b.ctx.memo("functions", lambda: sorted(
        ((n.lineno, id(n)), n) for n in ast.walk(b.ctx.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))))
    scope = b.ctx.tree
    k = bisect.bisect_right(functions, ((line, 1 << 62),))
    while k:  # the innermost function around the line: the nearest one before it that holds it
        k -= 1
        if functions[k][1].lineno <= line <= functions[k][1].end_lineno:
            scope = functions[k][1]
            break
    stores = b.ctx.memo(("stores", id(scope)), lambda: _stores(scope)).get(name, ())
    if len(stores) != 1 or stores[0][0].lineno >= line:
        return None
    assign = stores[0][1]
    if not isinstance(assign, ast.Assign) or len(assign.targets) != 1 or not isinstance(assign.value, ast.Call):
        return None
    call = b.ctx.cst_of(assign.value)
    if not isinstance(call, cst.Call) or dotted(call.func) not in _TQDM or not call.args \
            or call.args[0].keyword is not None or call.args[0].star or not _is_loader(b, call.args[0].value):
        return None
    return call


def _stores(scope) -> dict:
    """name -> [(each node binding it in ``scope``, nested ones too; the assignment holding it
    or None)]: a walk of the scope, once."""
    out: dict[str, list] = {}
    seen: set[int] = set()
    for node in ast.walk(scope):  # (an assignment comes before its targets)
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append((t, node))
                    seen.add(id(t))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            if id(node) not in seen:
                out.setdefault(node.id, []).append((node, None))
        elif isinstance(node, ast.arg):
            out.setdefault(node.arg, []).append((node, None))
    return out


def _known_device(b, line: int) -> str | None:
    """The device variable in scope at ``line`` (``device = torch_xla.device()``, a class's
    ``self.device``), or None."""
    model = b.ctx.model
    return model.device_name_at(model.ctx_at_line(line), line) or b.ctx.self_device_at(line)


def _batch_names(target) -> set[str]:
    """The names a loop target binds (``x``, ``(x, y)``, ``i, (x, y)``)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_batch_names(el.value) for el in target.elements)) if target.elements else set()
    return set()


def _move_of(b, call, names, device: str | None):
    """``(x, the device text)`` for ``x.to(D)`` (also ``x.to(device=D)``, with
    ``non_blocking=``) where ``x`` is one of ``names`` and ``D`` a name or attribute chain
    (``device``, ``self.device``; or the text ``device`` when given); else None."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "to" \
            or not isinstance(call.func.value, cst.Name) or call.func.value.value not in names:
        return None
    dev = None
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None and dev is None:
            dev = arg.value
        elif arg.keyword is not None and arg.keyword.value == "device" and dev is None:
            dev = arg.value
        elif not (arg.keyword is not None and arg.keyword.value == "non_blocking"):
            return None
    if dev is None:
        return None
    text = _code(b, dev)
    if device is not None:
        return (call.func.value.value, text) if text == device else None
    return (call.func.value.value, text) if dotted(dev) is not None else None


def _moved_to(b, loop) -> str | None:
    """The device the loop's body moves its batches to (``x = x.to(device)``: ``device``, a
    name or ``self.`` chain the body does not rebind), when it names one only; else None."""
    names = _batch_names(loop.target)
    found = {m[1] for m in (_move_of(b, n, names, None) for n in _walk(loop.body)) if m is not None}
    if len(found) != 1:
        return None
    device = found.pop()
    root = device.split(".")[0]
    if root in _names_of(loop.body).bound or root in names:
        return None
    return device


def _drop_redundant_moves(b, loop, device: str) -> None:
    """The device loader's batches are on ``device`` already: in the loop's body, a
    statement ``x = x.to(device)`` (``x, y = x.to(device), y.to(device)``) goes, and another
    ``x.to(device)`` becomes ``x``, for each batch name not rebound before it."""
    live = _batch_names(loop.target)
    for stmt in getattr(loop.body, "body", ()):
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        for small in smalls:
            if _self_moves(b, small, live, device):  # x = x.to(device): x stays the batch
                b.edit(small, lambda _: cst.RemovalSentinel.REMOVE, "redundant move")
                continue
            if isinstance(stmt, cst.SimpleStatementLine):
                for n in _walk(small):
                    m = _move_of(b, n, live, device)
                    if m is not None:
                        b.edit(n, lambda _, x=m[0]: cst.Name(x), "redundant move")
            live = live - _names_of(small).bound


def _self_moves(b, small, live, device: str) -> bool:
    """``x = x.to(device)`` or ``x, y = x.to(device), y.to(device)`` (each ``x`` live)."""
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return False
    target, value = small.targets[0].target, small.value
    pairs = [(target, value)]
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Tuple) \
            and len(target.elements) == len(value.elements):
        pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    for t, v in pairs:
        m = _move_of(b, v, live, device)
        if not isinstance(t, cst.Name) or m is None or m[0] != t.value:
            return False
    return True


_LOOP_LINE = re.compile(r"\(line (\d+)\)")


def _callee_loop(b):
    """The ``for`` loop (LibCST) of the function a reported loader is passed to, when every
    loader that reaches it in the module is a plain ``DataLoader`` (none is a device loader
    already, none is unknown)."""
    m = _LOOP_LINE.search(b.finding.message)
    if m is None:
        return None
    line = int(m.group(1))
    model = b.ctx.model
    loop = b.ctx.loop_at(line)
    if loop is None:
        return None
    kind = model.loader_kind(loop.node.iter, loop.ctx)
    if type(kind) is not tuple or not _only_plain(model, kind[1], kind[2], 0):
        return None
    return b.ctx.for_at(line)


def _only_plain(model, func, name, depth) -> bool:
    calls = model.calls_of(func)
    if not calls or depth > 8:
        return False
    for call, ctx in calls:
        arg = model.argument_for(call, ctx, func, name)
        if not isinstance(arg, ast.AST):
            return False
        kind = model.loader_kind(arg, ctx)
        if kind == "plain":
            continue
        if type(kind) is not tuple or not _only_plain(model, kind[1], kind[2], depth + 1):
            return False
    return True


def _loader_path(b, it):
    """How to reach the loader in a loop's iterable: ``[]`` (it is the loader), ``[0]``
    (``enumerate(loader)``), ``[0, 0]`` (``enumerate(tqdm(loader))``); None when the loader
    is not a name or a ``DataLoader(...)`` reached that way (``zip(a, b)``: a human)."""
    path = []
    while isinstance(it, cst.Call) and dotted(it.func) in _ITER_WRAPPERS and len(path) < 4:
        if not it.args or it.args[0].keyword is not None or it.args[0].star:
            return None
        path.append(0)
        it = it.args[0].value
    return path if _is_loader(b, it) else None


def _is_loader(b, node) -> bool:
    """A name or attribute (the rule saw a plain loader there), or a call the model sees
    return a torch ``DataLoader`` (``DataLoader(...)``, ``self.train_dataloader()``)."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        return True
    if isinstance(node, cst.Call):
        if (dotted(node.func) or "").rsplit(".", 1)[-1] in _COMBINERS:
            return False  # zip(a, b), islice(loader, n): which loader to wrap is a human's call
        call = b.ctx.ast_node(node)
        model = b.ctx.model
        ctx = model.call_ctx(call) if call is not None else None
        return ctx is not None and model.loader_kind(call, ctx) == "plain"
    return False


# -- XLA303: the distributed sampler ------------------------------------------------------------

_SAMPLER_MODULES = ("torch.utils.data", "torch.utils.data.distributed")
_SAMPLER_NAMES = ("sampler", "train_sampler", "data_sampler", "dist_sampler")


@fixes("XLA303")
def _distributed_sampler(b, node):
    """``DataLoader(ds, shuffle=True)`` -> ``sampler = DistributedSampler(ds, num_replicas=
    xr.world_size(), rank=xr.global_ordinal(), shuffle=True)`` before it and
    ``DataLoader(ds, sampler=sampler)``; a ``RandomSampler(ds)`` / ``SequentialSampler(ds)``
    becomes that sampler; a ``DistributedSampler(ds)`` gets the two arguments."""
    if not isinstance(node, cst.Call) or any(a.star for a in node.args):
        return False
    b.applicability = UNSAFE  # each replica now reads its own share of the data
    world, rank = _runtime(b, "WORLD_SIZE"), _runtime(b, "RANK")
    if world is None or rank is None:
        return False
    call = b.ctx.ast_node(node)
    model = b.ctx.model
    if call is None:
        return False
    if model.call_name(call, model.call_ctx(call)) in DISTRIBUTED_SAMPLERS:  # unbound: no process group
        missing = [(name, value) for name, pos, value in (("num_replicas", 1, world), ("rank", 2, rank))
                   if arg_index(node, name, pos) is None]
        if not missing or len(positional_indices(node)) > 1:
            return False

        def add(c):
            for name, value in missing:
                c = append_arg(c, kwarg(name, expr(value)))
            return c
        b.edit(node, add, "bind sampler")
        return True
    sampler_cls = b.ref_name(_SAMPLER_MODULES, "DistributedSampler")
    if sampler_cls is None:
        return False
    i = arg_index(node, "sampler", 3)
    if i is not None:  # a RandomSampler / SequentialSampler over the whole dataset
        whole = node.args[i].value
        if not isinstance(whole, cst.Call) or len(whole.args) != 1 or whole.args[0].keyword is not None \
                or whole.args[0].star:
            return False
        kind = (dotted(whole.func) or "").rsplit(".", 1)[-1]
        if kind not in ("RandomSampler", "SequentialSampler"):
            return False
        shuffle = "True" if kind == "RandomSampler" else "False"
        text = f"{sampler_cls}({_code(b, whole.args[0].value)}, num_replicas={world}, rank={rank}, shuffle={shuffle})"
        b.edit(whole, lambda _: expr(text), "sampler")
        return True
    # no sampler: one bound before the loader's statement
    dataset = arg_index(node, "dataset", 0)
    if dataset is None or not isinstance(node.args[dataset].value, (cst.Name, cst.Attribute)) \
            or dotted(node.args[dataset].value) is None:
        return False
    if arg_index(node, "shuffle", 2) is not None and keyword_index(node, "shuffle") is None:
        return False  # shuffle passed positionally
    shuffle_i = keyword_index(node, "shuffle")
    shuffle = node.args[shuffle_i].value if shuffle_i is not None else cst.Name("False")
    if not isinstance(shuffle, (cst.Name, cst.Attribute)):
        return False  # an expression with effects would now run earlier
    stmt = b.ctx.statement_of(node)
    if stmt is None or b.ctx.block_of(stmt) is None:
        return False
    imports = b.ctx.imports
    name = next((n for n in _SAMPLER_NAMES if not imports.rebound.get(n) and n not in imports.imported
                 and n not in imports.used_before), None)
    if name is None:
        return False
    text = (f"{name} = {sampler_cls}({_code(b, node.args[dataset].value)}, num_replicas={world}, rank={rank}, "
            f"shuffle={_code(b, shuffle)})")
    b.insert(stmt, "before", lambda: text, "sampler")
    _set_epoch(b, stmt, name)

    def use(c):
        i = keyword_index(c, "shuffle")
        if i is not None:  # the sampler shuffles now: DataLoader rejects both
            args = list(c.args)
            args[i] = args[i].with_changes(keyword=cst.Name("sampler"), value=cst.Name(name))
            return c.with_changes(args=args)
        return append_arg(c, kwarg("sampler", cst.Name(name)))
    b.edit(node, use, "sampler")
    return True


def _inside(b, node, ancestor) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = b.ctx.parent(node)
    return False


def _set_epoch(b, stmt, sampler: str) -> None:
    """``sampler.set_epoch(epoch)`` at the top of the epoch loop (a ``for epoch in ...:``
    with a plain name for target): the loop around the loader's statement ``stmt`` (then
    just after the new sampler), else the innermost loop after it, in its function, whose
    body iterates or passes on the loader (``for epoch in range(n): for x in loader:`` /
    ``fit(loader)``). Without it every epoch shuffles alike. Nothing when there is no such
    loop or it already calls ``set_epoch``."""
    def epoch_of(loop):
        return loop.target.value if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) else None

    node = b.ctx.parent(stmt)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
        if isinstance(node, cst.For):
            if epoch_of(node) is None or "set_epoch(" in _code(b, node.body):
                return
            b.insert(stmt, "before", lambda: f"{sampler}.set_epoch({epoch_of(node)})", "set epoch")
            return
        node = b.ctx.parent(node)
    scope = node
    body = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(body, cst.Assign) or len(body.targets) != 1 or not isinstance(body.targets[0].target, cst.Name):
        return
    loader = body.targets[0].target.value
    after = _lines(b, stmt)[1]
    for use in b.ctx.names(loader):
        if _lines(b, use)[0] <= after or not _inside(b, use, scope):
            continue
        node, loop = use, None
        while node is not None and node is not scope:
            parent = b.ctx.parent(node)
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                break
            if isinstance(parent, cst.For) and node is parent.body:
                loop = parent
                break
            node = parent
        if loop is None:
            continue
        epoch = epoch_of(loop)
        first = loop.body.body[0] if isinstance(loop.body, cst.IndentedBlock) and loop.body.body else None
        if epoch is None or first is None or "set_epoch(" in _code(b, loop.body):
            return
        b.insert(first, "before", lambda: f"{sampler}.set_epoch({epoch})", "set epoch")
        return


# -- XLA404 / XLA405: the model on the device, the optimizer after it -----------------------------

@fixes("XLA404")
def _move_module(b, node):
    """``model = Net()`` -> ``model = Net()`` then ``model.to(device)`` (the device variable in
    scope, else the XLA device)."""
    if not isinstance(node, cst.Name):
        return False
    b.applicability = UNSAFE  # the module (and what it computes) now lives on the device
    stmt = b.ctx.statement_of(node)
    if not isinstance(stmt, cst.SimpleStatementLine) or b.ctx.block_of(stmt) is None:
        return False
    device = b.device_at(b.finding.line)
    if device is None:
        return False
    b.insert(stmt, "after", lambda: f"{node.value}.to({device})", "move " + node.value)
    return True


_MOVE_LINE = re.compile(r"\.\w+\(\) on line (\d+):")


@fixes("XLA405")
def _optimizer_after_move(b, node):
    """Moves ``optimizer = Opt(model.parameters())`` to just after the statement that moves
    the module: the optimizer is then built over the device parameters. Nothing between
    may use the optimizer or rebind a name its constructor reads."""
    m = _MOVE_LINE.search(b.finding.message)
    if not isinstance(node, cst.Call) or m is None:
        return False
    b.applicability = UNSAFE  # the optimizer is built later: code between no longer sees it
    move_line = int(m.group(1))
    stmt = b.ctx.statement_of(node)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
            or not isinstance(stmt.body[0], cst.Assign) or stmt.body[0].value is not node:
        return False
    targets = stmt.body[0].targets
    if len(targets) != 1 or not isinstance(targets[0].target, (cst.Name, cst.Attribute)):
        return False
    opt_text = dotted(targets[0].target)
    body, at = _siblings(b, stmt)
    if opt_text is None or body is None:
        return False
    anchor = None
    for later in body[at + 1:]:
        start, end = _lines(b, later)
        if start <= move_line <= end:
            anchor = later
            break
    if anchor is None:
        return False
    if not any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
               and n.func.attr.value in ("parameters", "named_parameters") for n in _walk(node)):
        return False  # parameters collected before it (a list, groups built in a loop) stay the old ones
    reads = _names_of(node).read
    module_roots = _move_receiver_roots(anchor, move_line, b)
    opt_root = opt_text.split(".")[0]
    for between in body[at + 1:body.index(anchor) + 1]:
        names = _names_of(between)
        if opt_root in names.read or opt_root in names.bound:
            if "." not in opt_text or _uses_chain(between, opt_text):
                return False  # the optimizer is used (or rebound) before the move
        rebound = (names.bound & reads) - (module_roots if between is anchor else set())
        if rebound:
            return False  # the constructor would read another value
    b.move_after(stmt, anchor)
    return True


def _move_receiver_roots(anchor, line, b) -> set[str]:
    """The names the move on ``line`` moves: the root of its receiver (``model`` in
    ``model = model.to(dev)``), and for a helper's move (``model = backend.prepare_model(model)``,
    project mode) the plain names it is handed."""
    for n in _walk(anchor):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and _lines(b, n)[0] == line:
            root = dotted(n.func.value)
            if root is not None:
                found = {root.split(".")[0]}
                if n.func.attr.value not in ("to", "cuda", "xla", "to_empty"):
                    found.update(a.value.value for a in n.args if isinstance(a.value, cst.Name))
                return found
    return set()


def _uses_chain(stmt, text: str) -> bool:
    """``self.opt`` (a dotted chain) appears in the statement."""
    return any(isinstance(n, cst.Attribute) and dotted(n) == text for n in _walk(stmt))


# -- XLA201: the optimizer step ------------------------------------------------------------

_CLIPS = frozenset({"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm"})


def _clipped_before(b, node) -> bool:
    """A gradient clip earlier in the function (or module) that holds ``node``."""
    scope = node
    while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
        scope = b.ctx.parent(scope)
    if scope is None:
        return False
    where = b.ctx.positions[node].start
    first = b.ctx.positions[scope].start if isinstance(scope, cst.FunctionDef) else None
    # a clip call starting in [the function's start (or the module's), the node's start)
    starts = b.ctx.call_starts(_CLIPS)
    low = (first.line, first.column) if first is not None else (0, 0)
    return bisect.bisect_left(starts, (where.line, where.column)) > bisect.bisect_left(starts, low)


@fixes("XLA201")
def _xm_optimizer_step(b, node):
    """``optimizer.step()`` -> ``xm.optimizer_step(optimizer)`` (all-reduces the gradients, then steps)."""
    if not isinstance(node, cst.Call) or node.args or not isinstance(node.func, cst.Attribute) \
            or node.func.attr.value != "step":
        return False
    b.applicability = UNSAFE  # the replicas now average their gradients: the update changes
    clipped = reduce_before_clip(b, node)  # reduce, clip, step: xm.optimizer_step would clip local gradients
    if clipped is not None:
        return clipped
    if _clipped_before(b, node):
        # a clip elsewhere before the step (not in its block): xm.optimizer_step would clip
        # local gradients (XLA203), and where to reduce needs a human
        return False
    step = b.ref("torch_xla.core.xla_model", "optimizer_step")
    if step is None:
        return False
    b.edit(node, lambda c: cst.Call(func=expr(step), args=[cst.Arg(c.func.value)])
           if isinstance(c.func, cst.Attribute) else c, "optimizer step")
    return True

"""Replicas: conditions whose outcome can differ between the processes of one run.

A test *depends on the replica* when it can be true on some processes and false on
others:

- it tests a **rank**: ``xm.is_master_ordinal()`` (any ``local=``), ``xr.global_ordinal()
  == 0``, ``xm.get_ordinal()``, ``xr.local_ordinal()``, ``dist.get_rank() == 0``, the
  launch index (the first parameter of the function given to ``xmp.spawn`` /
  ``torch_xla.launch``, followed into the module functions it is passed to), ``RANK`` /
  ``LOCAL_RANK`` read from the environment, a name conventionally holding a rank, integer
  arithmetic of those (``rank % 8 == 0``), names bound from any of them, and the
  frameworks' one-process predicates (``accelerator.is_main_process``,
  ``trainer.is_global_zero``, ``is_world_process_zero()``);
- or it tests a value computed from the replica's **own data**: a host read of a tensor
  the step or an evaluation loop computes (``loss.item()``), a metric accumulated over
  the batches of a data loop (``correct += pred.eq(y).sum()``, ``correct / total``), and
  what module helpers return from those.

A value produced by a collective that hands every replica the same result
(``xm.mesh_reduce``, ``xm.all_reduce``, ``xm.all_gather``, ``dist.all_reduce`` in
place, ``dist.broadcast``) does not differ, nor do the world size, configuration and
constants. What cannot be seen is not replica-dependent: rules never fire on unknown.

Queries: :meth:`Replicas.replica_kind` / :meth:`~Replicas.replica_dependent` of a test,
:meth:`~Replicas.replica_guards` (the replica-dependent branches around a place in its
function, early ``return`` / ``continue`` included), :meth:`~Replicas.replica_guarded_sites`
(where code is reached only under such a branch: the place itself, or the guarded calls of
the module helper it sits in), :meth:`~Replicas.local_master_test` and
:meth:`~Replicas.test_statement`; functions of the model: :func:`is_rank_value` (an
expression holding a rank: ``.to(rank)`` names a replica's device) and
:func:`single_replica_branch` (code a world-size test keeps to one replica).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from .scopes import UNKNOWN, Ctx, FunctionInfo

if TYPE_CHECKING:  # the facade is built from this mixin: annotations only
    from . import Model

MASTER_TEST = "torch_xla.core.xla_model.is_master_ordinal"
#: calls returning this process's rank (or its host's index: it differs between processes)
RANK_APIS = frozenset({
    "torch_xla.runtime.global_ordinal", "torch_xla.runtime.local_ordinal", "torch_xla.runtime.process_index",
    "torch_xla.core.xla_model.get_ordinal", "torch_xla.core.xla_model.get_local_ordinal",
    "torch.distributed.get_rank", "torch.distributed.get_node_local_rank",
})
#: names that conventionally hold a process rank
RANK_NAMES = frozenset({"rank", "local_rank", "global_rank", "ordinal", "local_ordinal", "global_ordinal"})
#: frameworks' attributes and methods that are true on one process only (Accelerate,
#: Lightning, the transformers Trainer)
RANK_PREDICATE_ATTRS = frozenset({"is_main_process", "is_local_main_process", "is_global_zero"})
RANK_PREDICATE_METHODS = frozenset({"is_world_process_zero", "is_local_process_zero"})
#: which master each of those predicates tests (Hugging Face Trainer, Accelerate, Lightning)
_PREDICATE_SCOPES = {"is_world_process_zero": "global", "is_local_process_zero": "local",
                     "is_main_process": "global", "is_local_main_process": "local", "is_global_zero": "global"}
#: decorators that run a function on rank 0 only (Lightning's ``rank_zero_only``)
RANK_ZERO_DECORATORS = frozenset({"rank_zero_only"})
#: arithmetic that keeps a value rank-dependent: ``index + 1``, ``rank % 8``, ``rank // 4``
RANK_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Mod, ast.FloorDiv)
#: collectives whose result is the same on every replica
AGREED = frozenset({
    "torch_xla.core.xla_model.mesh_reduce", "torch_xla.core.xla_model.all_reduce",
    "torch_xla.core.xla_model.all_gather", "torch_xla.core.xla_model.collective_broadcast",
    "torch_xla.core.xla_model.rendezvous", "torch_xla.runtime.world_size",
    "torch_xla.core.xla_model.xrt_world_size", "torch.distributed.get_world_size",
})
#: collectives that make an argument the same on every replica, in place (its position)
AGREED_IN_PLACE = {
    "torch.distributed.all_reduce": 0, "torch.distributed.broadcast": 0, "torch.distributed.all_gather": 0,
    "torch.distributed.all_gather_object": 0, "torch.distributed.broadcast_object_list": 0,
    "torch_xla.core.xla_model.all_reduce": 1, "torch_xla.core.xla_model.collective_broadcast": 0,
}
#: torch predicates on a tensor's kind, not its values
_KIND_TESTS = frozenset({"torch.is_tensor", "torch.is_floating_point", "torch.is_complex", "torch.is_storage",
                         "torch.is_nonzero"})
#: reads of a tensor's shape or size: equal on every replica for equal batches
_SHAPE_METHODS = frozenset({"size", "dim", "numel", "nelement", "ndimension", "element_size", "__len__", "type"})
_SHAPE_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "training", "itemsize"})
_LOADER_NAME = re.compile(r"(?i)loader|batches|dataset")
_DEPTH = 12


class Replicas:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    # ------------------------------------------------------------------ tests
    def replica_dependent(self, test: ast.AST, ctx: Ctx) -> bool:
        """True when the outcome of ``test`` can differ between replicas."""
        return self.replica_kind(test, ctx) is not None

    def replica_kind(self, test: ast.AST, ctx: Ctx) -> str | None:
        """Why ``test`` can differ between replicas: ``"rank"`` (it tests a rank or the
        master ordinal), ``"data"`` (a value computed from the replica's own data), or
        None (the same everywhere, or unknown). Memoised per test node."""
        key = ("rk", id(test))
        cache = self._cache
        if key not in cache:
            cache[key] = None  # a cycle through names: unknown
            cache[key] = self._test_kind(test, ctx, 0)
        return cache[key]

    def _test_kind(self, node, ctx, depth):
        if node is None or depth > _DEPTH:
            return None
        t = type(node)
        if t is ast.BoolOp:
            kinds = [self._test_kind(v, ctx, depth + 1) for v in node.values]
            return "rank" if "rank" in kinds else "data" if "data" in kinds else None
        if t is ast.UnaryOp and type(node.op) is ast.Not:
            return self._test_kind(node.operand, ctx, depth + 1)
        if t is ast.NamedExpr:
            return self._test_kind(node.value, ctx, depth + 1)
        if t is ast.Call:
            q = self.call_name(node, ctx)
            if q == MASTER_TEST or q in RANK_APIS:
                return "rank"
            f = node.func
            if q is None and type(f) is ast.Attribute and f.attr in RANK_PREDICATE_METHODS:
                return "rank"
            if self.project_lookup is not None and (q is None and type(f) is ast.Attribute or type(f) is ast.Name
                                                    and not (q or "torch").startswith("torch")):
                helpers = self.callee_helpers(node, ctx)  # trainer.is_zero(), is_main(): returns a master test
                if helpers and all(h.master for h in helpers):
                    return "rank"
            if q is None and self._helper_returns(node, ctx, lambda v, c: self._test_kind(v, c, depth + 1) == "rank"):
                return "rank"  # is_master(): a module predicate returning a rank test
            return "data" if self.local_value(node, ctx) else None
        if t is ast.Compare:
            sides = [node.left, *node.comparators]
            if any(self.rank_value(s, ctx) for s in sides) and any(_ordinal_const(self, s, ctx) for s in sides):
                return "rank"
            if all(type(op) in (ast.Is, ast.IsNot, ast.In, ast.NotIn) for op in node.ops):
                return None  # `x is None`, `"labels" in batch`: a structure test, not a value
            return "data" if any(self.local_value(s, ctx) for s in sides) else None
        if t in (ast.Name, ast.Attribute):
            if t is ast.Attribute and node.attr in RANK_PREDICATE_ATTRS and self.qualname(node, ctx) is None:
                return "rank"
            if self.rank_value(node, ctx):
                return "rank"  # `if index:` is true on every replica but the first
            values = self.values(node, ctx) if self.qualname(node, ctx) is None else None
            if values and len(values) == 1 and type(values[0][0]) in (ast.Call, ast.Compare, ast.UnaryOp, ast.BoolOp):
                kind = self._test_kind(values[0][0], values[0][1], depth + 1)  # is_master = xm.is_master_ordinal()
                if kind is not None:
                    return kind
        return None  # `if not batch:` / `if batch["mask"]:`: the truth of a container, not a value read

    # ------------------------------------------------------------------ ranks
    def rank_value(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
        """True when ``expr`` holds a process rank or integer arithmetic of one: the launch
        index, a rank API's result, ``RANK`` / ``LOCAL_RANK`` from the environment, a name
        that says rank, through assignments and the parameters module functions receive it
        in (every visible call must pass a rank)."""
        if expr is None or expr is UNKNOWN or _depth > _DEPTH:
            return False
        key = ("rv", id(expr))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = False
        result = self._rank_value(expr, ctx, _depth)
        cache[key] = result
        return result

    def _rank_value(self, node, ctx, depth):
        if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in ("int", "str") \
                and len(node.args) == 1 and self.lookup(node.func.id, ctx, None) is None:
            node = node.args[0]
        t = type(node)
        if t is ast.Call:
            q = self.call_name(node, ctx)
            if q in RANK_APIS:
                return True
            if q in ("os.environ.get", "os.getenv") and node.args:
                return self.const(node.args[0], ctx) in ("RANK", "LOCAL_RANK")
            return q is None and self._helper_returns(node, ctx, lambda v, c: self.rank_value(v, c, depth + 1))
        if t is ast.Subscript:
            return self.qualname(node.value, ctx) == "os.environ" and self.const(node.slice, ctx) in ("RANK", "LOCAL_RANK")
        if t is ast.BinOp:
            return type(node.op) in RANK_ARITH and (
                self.rank_value(node.left, ctx, depth + 1) or self.rank_value(node.right, ctx, depth + 1))
        if t is ast.Name:
            bindings = self.lookup(node.id, ctx, getattr(node, "lineno", None))
            if bindings and all(kind == "param" for _, kind, _, _ in bindings):
                func = bindings[0][2]
                if isinstance(func, FunctionInfo):
                    if self.is_launch_index(func, node.id):
                        return True
                    args = self.param_arguments(func, node.id)
                    if args and all(self.rank_value(a, c, depth + 1) for a, c in args):
                        return True
            if node.id.lower() in RANK_NAMES:
                return True
        elif t is ast.Attribute:
            if node.attr.lower() in RANK_NAMES and self.qualname(node, ctx) is None:
                return True
        else:
            return False
        if self.qualname(node, ctx) is not None:
            return False
        values = self.values(node, ctx)
        return bool(values) and all(
            type(v) in (ast.BinOp, ast.Call, ast.Name, ast.Attribute, ast.Subscript) and self.rank_value(v, c, depth + 1)
            for v, c in values)

    def _one_return(self, call: ast.Call, ctx: Ctx):
        """``(value, ctx)`` of the one ``return`` of the one module function ``call`` runs
        (not a generator), else None."""
        funcs = self.function_of(call.func, ctx)
        if not funcs or len(funcs) != 1 or len(funcs[0].returns) != 1 \
                or not self._helper_returns(call, ctx, lambda v, c: True):
            return None
        return funcs[0].returns[0]

    def _helper_returns(self, call: ast.Call, ctx: Ctx, pred) -> bool:
        """``call`` runs one function of the module (by name or ``self.m()``) every ``return``
        value of which satisfies ``pred(value, ctx)`` (``def is_master(): return
        xr.global_ordinal() == 0``); a generator, or a function returning nothing, is not."""
        funcs = self.function_of(call.func, ctx)
        if not funcs or len(funcs) != 1 or not funcs[0].returns:
            return False
        func = funcs[0]
        key = ("rt_gen", id(func))
        if key not in self._cache:
            from .attributes import _has_yield
            self._cache[key] = _has_yield(func)
        if self._cache[key]:
            return False
        return all(pred(v, c) for v, c in func.returns)

    # ------------------------------------------------------------------ own data
    def local_value(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
        """True when ``expr`` is computed from this replica's own data: a tensor the step
        or a data loop computes (the loss, a model output, the batch), a host read of one
        (``loss.item()``), what is accumulated from those over a data loop, arithmetic and
        module helpers' returns of those. A collective's agreed result is not."""
        if expr is None or expr is UNKNOWN or ctx is None or _depth > _DEPTH:
            return False
        key = ("lv", id(expr))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = False  # cycles: not local
        result = self._local(expr, ctx, _depth)
        cache[key] = result
        return result

    def _local(self, e, ctx, depth):
        t = type(e)
        d = depth + 1
        if t is ast.Name:
            return self._local_name(e, ctx, d)
        if t is ast.Attribute:
            if e.attr in _SHAPE_ATTRS or self.qualname(e, ctx) is not None:
                return False
            values = self.values(e, ctx)
            if values:
                return any(v is not None and self.local_value(v, c, d) for v, c in values)
            return self.local_value(e.value, ctx, d)
        if t is ast.Subscript:
            return self.local_value(e.value, ctx, d)
        if t is ast.Call:
            return self._local_call(e, ctx, d)
        if t is ast.BinOp:
            return self.local_value(e.left, ctx, d) or self.local_value(e.right, ctx, d)
        if t is ast.UnaryOp:
            return self.local_value(e.operand, ctx, d)
        if t is ast.BoolOp:
            return any(self.local_value(v, ctx, d) for v in e.values)
        if t is ast.Compare:
            return any(self.local_value(v, ctx, d) for v in [e.left, *e.comparators])
        if t is ast.IfExp:
            return self.local_value(e.body, ctx, d) or self.local_value(e.orelse, ctx, d)
        if t in (ast.Tuple, ast.List):
            return any(self.local_value(v, ctx, d) for v in e.elts)
        if t is ast.Dict:
            return any(self.local_value(v, ctx, d) for v in e.values)
        if t is ast.NamedExpr:
            return self.local_value(e.value, ctx, d)
        return False

    def _local_call(self, e, ctx, d):
        q = self.call_name(e, ctx)
        if q in AGREED or q in RANK_APIS or q == MASTER_TEST:
            return False
        f = e.func
        if id(e) in self.backward_values()[0]:
            return True  # what the loss is computed from
        if type(f) is ast.Name and self.lookup(f.id, ctx, None) is None:  # a builtin
            if f.id in ("len", "range", "isinstance", "type", "id", "hasattr", "getattr", "str", "repr"):
                return False
            return any(self.local_value(a, ctx, d) for a in e.args if type(a) is not ast.Starred)
        if q is not None:
            if q in _KIND_TESTS:
                return False
            if q.startswith(("torch.", "numpy.", "math.", "statistics.")) and not q.startswith("torch.distributed."):
                return any(self.local_value(a, ctx, d) for a in e.args if type(a) is not ast.Starred)
            return False
        if type(f) is ast.Attribute:
            if f.attr in _SHAPE_METHODS:
                return False
            if self.local_value(f.value, ctx, d):
                return True  # loss.item(), pred.eq(y).sum(), out.logits.argmax(-1)
        funcs = self.function_of(f, ctx)
        if funcs:
            return any(self.local_value(v, c, d) for func in funcs for v, c in func.returns)
        # model(x) / criterion(out, y): a callable applied to the replica's data
        return any(self.local_value(a, ctx, d) for a in e.args if type(a) is not ast.Starred)

    def _local_name(self, e, ctx, d):
        if self._reduced_in_place(e, ctx):
            return False
        bindings = self.lookup(e.id, ctx, getattr(e, "lineno", None))
        if not bindings:
            return False
        _, bw_names = self.backward_values()
        for line, kind, target, b_ctx in bindings:
            scope = b_ctx.scope if b_ctx is not None else ctx.scope
            if kind == "value" and b_ctx is not None:
                if self.local_value(target, b_ctx, d):
                    return True
            elif kind == "item" and b_ctx is not None:
                if self.local_value(target[0], b_ctx, d):
                    return True
            elif kind == "unknown":
                if (id(scope), e.id, line) in self._data_loop_targets():
                    return True
                aug = self._aug_assigns(scope).get((e.id, line))
                if aug is not None and b_ctx is not None and (
                        self.local_value(aug, b_ctx, d) or self._local_before(e, line, b_ctx, d)):
                    return True
                if (id(scope), e.id) in bw_names and (id(scope), e.id, line) in self._loop_target_lines():
                    return True  # a loop target the loss is computed from: the batch
            elif kind == "param" and isinstance(target, FunctionInfo):
                args = self.param_arguments(target, e.id)
                if args and any(self.local_value(a, c, d) for a, c in args):
                    return True
        return False

    def _local_before(self, e, line, ctx, d):
        """``total = 0 ... total += x``: whether the binding before the augmented one is local."""
        before = self.lookup(e.id, ctx, line - 1) if line > 1 else None
        if not before or any(b[0] >= line for b in before):
            return False
        return any(k == "value" and b_ctx is not None and self.local_value(v, b_ctx, d) for _, k, v, b_ctx in before)

    def _reduced_in_place(self, e, ctx) -> bool:
        """``dist.all_reduce(t)`` earlier in the same function: ``t`` is agreed from then on."""
        table = self._cache.get("inplace_reduced")
        if table is None:
            table = self._cache["inplace_reduced"] = {}
            for call, cctx in self.calls_to(*AGREED_IN_PLACE):
                arg = self.kwarg(call, "inputs" if "xla_model" in self.call_name(call, cctx) else "tensor",
                                 AGREED_IN_PLACE[self.call_name(call, cctx)])
                for a in (arg.elts if type(arg) in (ast.List, ast.Tuple) else [arg]):
                    if type(a) is ast.Name:
                        table.setdefault((id(cctx.scope), a.id), []).append(call.lineno)
        lines = table.get((id(ctx.scope), e.id))
        return bool(lines) and min(lines) < getattr(e, "lineno", 0)

    def _aug_assigns(self, scope) -> dict:
        """``(name, line) -> value`` of the augmented assignments (``x += v``) made
        directly in ``scope`` (nested functions and classes left out); memoised per scope."""
        key = ("augs", id(scope))
        cache = self._cache
        if key in cache:
            return cache[key]
        out = {}
        node = scope.node
        todo = list(getattr(node, "body", ())) if type(node) is not ast.Lambda else []
        while todo:
            n = todo.pop()
            t = type(n)
            if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                continue
            if t is ast.AugAssign and type(n.target) is ast.Name:
                out[(n.target.id, n.lineno)] = n.value
            for child in ast.iter_child_nodes(n):
                if isinstance(child, ast.stmt) or type(child) in (ast.ExceptHandler, ast.match_case):
                    todo.append(child)
        cache[key] = out
        return out

    def _loop_target_lines(self) -> set:
        """``(scope id, name, line)`` of every ``for`` loop target."""
        table = self._cache.get("looptgt_lines")
        if table is None:
            table = self._cache["looptgt_lines"] = set()
            for loop in self.loops:
                node = loop.node
                if type(node) in (ast.For, ast.AsyncFor):
                    for n in _names(node.target):
                        table.add((id(loop.ctx.scope), n, node.lineno))
        return table

    def _data_loop_targets(self) -> set:
        """``(scope id, name, line)`` of the batches of data loops: a ``for`` over a loader
        (a ``DataLoader``, a device loader, a parameter a loop draws batches from, a name
        that says loader) or the innermost step loop; ``enumerate``'s index and counting
        loops (``range``) are left out."""
        table = self._cache.get("data_targets")
        if table is not None:
            return table
        table = self._cache["data_targets"] = set()
        for loop in self.loops:
            node = loop.node
            if type(node) not in (ast.For, ast.AsyncFor):
                continue
            it, target = node.iter, node.target
            if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "enumerate" \
                    and type(target) in (ast.Tuple, ast.List) and len(target.elts) == 2:
                target = target.elts[1]
            if _counting(it):
                continue  # for epoch in range(n): a counter, the same on every replica
            if self._data_iterable(it, loop.ctx) or self.is_inner_step_loop(loop):
                for n in _names(target):
                    table.add((id(loop.ctx.scope), n, node.lineno))
        return table

    def _data_iterable(self, it, ctx) -> bool:
        if self.loader_kind(it, ctx) is not None:
            return True
        inner = it
        for _ in range(4):
            if type(inner) is ast.Call and inner.args and type(inner.func) in (ast.Name, ast.Attribute):
                ident = inner.func.id if type(inner.func) is ast.Name else inner.func.attr
                if ident in ("enumerate", "tqdm", "iter", "islice"):
                    inner = inner.args[0]
                    continue
            break
        ident = inner.id if type(inner) is ast.Name else inner.attr if type(inner) is ast.Attribute else None
        return bool(ident) and bool(_LOADER_NAME.search(ident))

    # ------------------------------------------------------------------ places
    def replica_guards(self, ctx: Ctx) -> list[tuple[ast.AST, bool, str]]:
        """The replica-dependent branches around code at ``ctx`` inside its function (or
        module), innermost first, as ``(test, polarity, kind)``: ``if`` / ``elif`` /
        ``else`` bodies, conditional expressions, and the code after ``if test: return``
        (or ``continue`` / ``break`` / ``raise`` / ``sys.exit()``), whose polarity is False.
        A function decorated with ``@rank_zero_only`` adds ``(decorator, True, "rank")``."""
        out = []
        base = ctx.func.ctx.frames if ctx.func is not None else None
        link = ctx.frames or None
        while link is not None and link is not base:
            frame = link.frame
            if type(frame) is tuple and len(frame) == 2:
                test, polarity = frame
                if not isinstance(test, ast.pattern):
                    kind = self.replica_kind(test, ctx)
                    if kind is not None:
                        out.append((test, polarity, kind))
            link = link.parent
        if ctx.func is not None:
            dec = self._rank_zero_decorator(ctx.func)
            if dec is not None:
                out.append(dec)
        return out

    def replica_guard(self, ctx: Ctx) -> tuple[ast.AST, bool, str] | None:
        """The innermost of :meth:`replica_guards`, or None: memoised per link of the frame
        chain, so asking at every call of an N-branch function costs N, not N squared."""
        memo = self._cache.setdefault("rguard", {})
        base = ctx.func.ctx.frames if ctx.func is not None else None
        link = ctx.frames or None
        todo = []
        while link is not None and link is not base and id(link) not in memo:
            todo.append(link)
            link = link.parent
        found = memo[id(link)] if link is not None and link is not base else None
        for node in reversed(todo):  # outermost first
            frame = node.frame
            if type(frame) is tuple and len(frame) == 2 and not isinstance(frame[0], ast.pattern):
                kind = self.replica_kind(frame[0], ctx)
                if kind is not None:
                    found = (frame[0], frame[1], kind)
            memo[id(node)] = found
        if ctx.frames and ctx.frames is not base:
            found = memo[id(ctx.frames)]
        else:
            found = None
        if found is None and ctx.func is not None:
            found = self._rank_zero_decorator(ctx.func)
        return found

    def _rank_zero_decorator(self, func: FunctionInfo):
        for dec in func.node.decorator_list:
            target = dec.func if type(dec) is ast.Call else dec
            ident = target.id if type(target) is ast.Name else target.attr if type(target) is ast.Attribute else ""
            if ident in RANK_ZERO_DECORATORS:
                return (dec, True, "rank")
        return None

    def may_be_replica_guarded(self, ctx: Ctx) -> bool:
        """A cheap necessary condition of :meth:`replica_guarded_sites` at ``ctx`` finding
        anything, asked before a dearer question: a branch test around ``ctx`` inside its
        function (of any kind: which tests are replica tests is not asked), a rank-zero
        decorator on the function, or some call of the function in the module. Never false
        where :meth:`replica_guarded_sites` is not empty."""
        func = ctx.func
        base = func.ctx.frames if func is not None else None
        link = ctx.frames or None
        while link is not None and link is not base:
            frame = link.frame
            if type(frame) is tuple and len(frame) == 2 and not isinstance(frame[0], ast.pattern):
                return True
            link = link.parent
        if func is None:
            return False
        return bool(self.calls_of(func)) or self._rank_zero_decorator(func) is not None

    def replica_guarded_sites(self, node: ast.AST, ctx: Ctx) -> list[tuple[ast.AST, Ctx, ast.AST, bool, str]]:
        """Where code at ``node`` is reached only under a replica-dependent condition, as
        ``(site, site ctx, test, polarity, kind)``: ``node`` itself when a branch of its own
        function guards it; otherwise each call of its module function (a helper) that such
        a branch guards, followed up the callers (8 levels). Empty when no visible path is
        guarded (an unguarded helper call, an entry point)."""
        guard = self.replica_guard(ctx)
        if guard is not None:
            test, polarity, kind = guard
            return [(node, ctx, test, polarity, kind)]
        if ctx.func is None:
            return []
        return self._guarded_calls(ctx.func, 0)

    def _guarded_calls(self, func: FunctionInfo, depth: int) -> list:
        key = ("gcalls", id(func))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = []  # recursion through a cycle: nothing more
        out = []
        if depth < 8:
            for call, cctx in self.calls_of(func):
                guard = self.replica_guard(cctx)
                if guard is not None:
                    test, polarity, kind = guard
                    out.append((call, cctx, test, polarity, kind))
                elif cctx.func is not None and cctx.func is not func:
                    out.extend(s for s in self._guarded_calls(cctx.func, depth + 1) if not any(s[0] is o[0] for o in out))
        cache[key] = out
        return out

    # ------------------------------------------------------------------ masters
    def local_master_test(self, test: ast.AST, ctx: Ctx, polarity: bool = True) -> ast.AST | None:
        """The ``xm.is_master_ordinal()`` call (default ``local=True``, or ``local=True``)
        that the branch ``(test, polarity)`` implies is true, through ``not``, ``and`` (the
        body of ``if a and master:``), ``or`` on the false side and names bound to it; also
        a helper returning it (of the module or, in project mode, of another), and
        Accelerate's ``accelerator.is_local_main_process`` (the attribute); None when the
        branch runs on other processes too or the master is the global one."""
        todo = [(test, ctx, polarity, 0)]
        found = None
        while todo:
            node, c, pol, depth = todo.pop()
            if depth > 8:
                continue
            t = type(node)
            if t is ast.UnaryOp and type(node.op) is ast.Not:
                todo.append((node.operand, c, not pol, depth + 1))
            elif t is ast.BoolOp:
                if (type(node.op) is ast.And) == pol:  # `a and b` true / `a or b` false: each holds
                    todo.extend((v, c, pol, depth + 1) for v in node.values)
            elif t is ast.Call:
                if pol and self.call_name(node, c) == MASTER_TEST:
                    local = self.kwarg(node, "local", 0)
                    if local is None or (local is not UNKNOWN and self.const(local, c) is True):
                        found = found or node
                elif self.call_name(node, c) is None:  # is_main_process(): return xm.is_master_ordinal()
                    funcs = self.function_of(node.func, c)
                    if len(funcs) == 1 and len(funcs[0].returns) == 1 and funcs[0].returns[0][0] is not None:
                        todo.append((funcs[0].returns[0][0], funcs[0].returns[0][1], pol, depth + 1))
                if pol and self.project_lookup is not None:  # the same helper in another project module
                    helpers = self.callee_helpers(node, c)  # (acc.is_main_process(): every class's)
                    if helpers and all(h.local_master for h in helpers):
                        found = found or node
            elif t is ast.Compare and pol and self._first_host_test(node, c, depth):
                return None  # `is_master_ordinal() and xr.process_index() == 0`: the global master
            elif t in (ast.Name, ast.Attribute) and self.qualname(node, c) is None:
                if pol and t is ast.Attribute and _PREDICATE_SCOPES.get(node.attr) == "local":
                    found = found or node  # accelerator.is_local_main_process (Accelerate's name)
                    continue
                values = self.values(node, c)  # a name or self.attribute bound to the test
                if values and len(values) == 1 and type(values[0][0]) in (ast.Call, ast.UnaryOp, ast.BoolOp):
                    todo.append((values[0][0], values[0][1], pol, depth + 1))
        return found

    _HOST_INDEX_APIS = frozenset({"torch_xla.runtime.process_index", "torch_xla.runtime.host_index"})

    def _first_host_test(self, node: ast.Compare, ctx: Ctx, depth: int) -> bool:
        """``xr.process_index() == 0`` (the first host) or a global rank test (``rank == 0``)."""
        if len(node.ops) != 1 or type(node.ops[0]) is not ast.Eq:
            return False
        for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            if self.const(other, ctx) not in (0, "0"):
                continue
            if type(side) is ast.Call and self.call_name(side, ctx) in self._HOST_INDEX_APIS:
                return True
            if self._rank_scope(side, ctx, depth + 1) == "global":
                return True
        return False

    def master_scope(self, test: ast.AST, ctx: Ctx, polarity: bool = True) -> str | None:
        """Which master the branch ``(test, polarity)`` implies this process is: ``"local"``
        (``xm.is_master_ordinal()``, ``local=True``, ``xr.local_ordinal() == 0``,
        ``LOCAL_RANK`` is 0) or ``"global"`` (``is_master_ordinal(local=False)``,
        ``xr.global_ordinal() == 0``, ``dist.get_rank() == 0``, the launch index is 0, ``not
        rank``, ``trainer.is_world_process_zero()``, ``accelerator.is_main_process``); None
        for any other branch (``rank % 8 == 0``, a host index, unknown)."""
        todo = [(test, ctx, polarity, 0)]
        while todo:
            node, c, pol, depth = todo.pop()
            if depth > 8:
                continue
            t = type(node)
            if t is ast.UnaryOp and type(node.op) is ast.Not:
                todo.append((node.operand, c, not pol, depth + 1))
            elif t is ast.BoolOp:
                if (type(node.op) is ast.And) == pol:
                    todo.extend((v, c, pol, depth + 1) for v in node.values)
            elif pol and t is ast.Call and self.project_lookup is not None and type(node.func) is ast.Name \
                    and not (self.call_name(node, c) or "torch").startswith("torch") \
                    and self.callee_helpers(node, c):  # is_main() imported from the project's utils
                scopes = {h.master for h in self.callee_helpers(node, c)}
                return scopes.pop() or None if len(scopes) == 1 else None
            elif pol and t is ast.Call and type(node.func) is ast.Attribute and self.call_name(node, c) is None \
                    and (node.func.attr in _PREDICATE_SCOPES or self.project_lookup is not None):
                helpers = self.callee_helpers(node, c)  # a project class's method: its own return
                if helpers is not None:
                    scopes = {h.master for h in helpers}
                    return scopes.pop() or None if len(scopes) == 1 else None
                if node.func.attr in _PREDICATE_SCOPES:
                    return _PREDICATE_SCOPES[node.func.attr]  # trainer.is_world_process_zero() of a library
            elif pol and t is ast.Attribute and node.attr in _PREDICATE_SCOPES and self.qualname(node, c) is None:
                return _PREDICATE_SCOPES[node.attr]  # accelerator.is_main_process
            elif t is ast.Call and self.call_name(node, c) == MASTER_TEST:
                if pol:
                    local = self.kwarg(node, "local", 0)
                    value = self.const(local, c) if isinstance(local, ast.AST) else UNKNOWN
                    if local is None or value is True:
                        return "local"
                    if value is False:
                        return "global"
            elif t is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq):
                if pol == (type(node.ops[0]) is ast.Eq):
                    for side, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                        if self.const(other, c) in (0, "0"):
                            scope = self._rank_scope(side, c, depth + 1)
                            if scope is not None:
                                return scope
            elif t in (ast.Name, ast.Attribute, ast.Call, ast.Subscript) and not pol:
                scope = self._rank_scope(node, c, depth + 1)  # `if not rank:` / `if rank: return`
                if scope is not None:
                    return scope
            if t is ast.Call and self.call_name(node, c) is None:
                ret = self._one_return(node, c)  # is_master(): a module predicate's own test
                if ret is not None:
                    todo.append((ret[0], ret[1], pol, depth + 1))
            if t is ast.Name and self.qualname(node, c) is None:
                values = self.values(node, c)
                bound = (ast.Call, ast.UnaryOp, ast.BoolOp, ast.Compare)
                if values and len(values) == 1 and type(values[0][0]) in bound:
                    todo.append((values[0][0], values[0][1], pol, depth + 1))
        return None

    _LOCAL_RANK_APIS = frozenset({"torch_xla.runtime.local_ordinal", "torch_xla.core.xla_model.get_local_ordinal",
                                  "torch.distributed.get_node_local_rank"})
    _GLOBAL_RANK_APIS = frozenset({"torch_xla.runtime.global_ordinal", "torch_xla.core.xla_model.get_ordinal",
                                   "torch.distributed.get_rank"})

    def _rank_scope(self, node, ctx, depth):
        """``"local"`` or ``"global"`` for a value holding this process's local or global rank."""
        if depth > 8 or node is None:
            return None
        if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in ("int", "str") \
                and len(node.args) == 1 and self.lookup(node.func.id, ctx, None) is None:
            node = node.args[0]
        t = type(node)
        if t is ast.Call:
            q = self.call_name(node, ctx)
            if q in self._LOCAL_RANK_APIS:
                return "local"
            if q in self._GLOBAL_RANK_APIS:
                return "global"
            if q in ("os.environ.get", "os.getenv") and node.args:
                key = self.const(node.args[0], ctx)
                return "global" if key == "RANK" else "local" if key == "LOCAL_RANK" else None
            ret = self._one_return(node, ctx) if q is None else None  # get_rank(): a module helper
            return self._rank_scope(ret[0], ret[1], depth + 1) if ret is not None else None
        if t is ast.Subscript:
            if self.qualname(node.value, ctx) == "os.environ":
                key = self.const(node.slice, ctx)
                return "global" if key == "RANK" else "local" if key == "LOCAL_RANK" else None
            return None
        if t not in (ast.Name, ast.Attribute) or self.qualname(node, ctx) is not None:
            return None
        if t is ast.Name:
            bindings = self.lookup(node.id, ctx, getattr(node, "lineno", None))
            if bindings and all(kind == "param" for _, kind, _, _ in bindings) and isinstance(bindings[0][2], FunctionInfo):
                func = bindings[0][2]
                if self.is_launch_index(func, node.id):
                    return "global"  # the launcher passes the global ordinal
                args = self.param_arguments(func, node.id)
                if args:
                    scopes = {self._rank_scope(a, c, depth + 1) for a, c in args}
                    if len(scopes) == 1:
                        return scopes.pop()
        values = self.values(node, ctx)
        if values and len(values) == 1 and values[0][0] is not None:
            scope = self._rank_scope(values[0][0], values[0][1], depth + 1)
            if scope is not None:
                return scope
        ident = (node.id if t is ast.Name else node.attr).lower()
        if ident in RANK_NAMES:
            return "local" if "local" in ident else "global"
        return None

    def test_statement(self, test: ast.AST) -> ast.AST | None:
        """The ``if`` / ``while`` statement or conditional expression whose test is ``test``
        (indexed by one walk of the module, on first use)."""
        table = self._cache.get("test_stmts")
        if table is None:
            table = self._cache["test_stmts"] = {}
            for n in ast.walk(self.tree):
                if type(n) in (ast.If, ast.While, ast.IfExp):
                    table[id(n.test)] = n
        return table.get(id(test))


def _ordinal_const(model, expr, ctx) -> bool:
    """A literal ordinal: a non-negative int (or its digits as a string, as read from the
    environment), or a tuple/list/set of them (``rank in (0, 1)``)."""
    if type(expr) in (ast.Tuple, ast.List, ast.Set):
        return bool(expr.elts) and all(_ordinal_const(model, e, ctx) for e in expr.elts)
    value = model.const(expr, ctx)
    if type(value) is str:
        return value.isdigit()
    return type(value) is int and value >= 0


def _counting(it) -> bool:
    """``range(n)``, ``enumerate(range(n))``, ``tqdm(range(n))``: a loop that counts."""
    for _ in range(4):
        if type(it) is not ast.Call or not it.args:
            return False
        f = it.func
        ident = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else None
        if ident == "range":
            return True
        if ident not in ("enumerate", "tqdm", "trange", "reversed", "iter"):
            return False
        if ident == "trange":
            return True
        it = it.args[0]
    return False


def _names(target) -> list[str]:
    if type(target) is ast.Name:
        return [target.id]
    if type(target) in (ast.Tuple, ast.List):
        return [n for e in target.elts for n in _names(e)]
    if type(target) is ast.Starred:
        return _names(target.value)
    return []


#: rank APIs whose value names a replica's device index (``process_index`` names a host)
_RANK_VALUE_APIS = RANK_APIS - {"torch_xla.runtime.process_index"}


def is_rank_value(model: Model, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
    """True when ``expr`` holds a process rank/ordinal (an integer naming a replica).

    The first parameter of a launched target (the launcher passes the global ordinal), a
    name conventionally holding a rank (``rank``, ``local_rank``, ...), or a value
    assigned from a rank API (``xr.global_ordinal()``, ``dist.get_rank()``,
    ``int(os.environ["LOCAL_RANK"])``), or what a module helper returning one gives
    (``get_rank()``).
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
        if model.call_name(node, ctx) in _RANK_VALUE_APIS:
            return True
        if model.call_name(node, ctx) in ("os.environ.get", "os.getenv"):
            key = model.const(node.args[0], ctx) if node.args else UNKNOWN
            return key in ("RANK", "LOCAL_RANK")
        ret = model._one_return(node, ctx) if model.call_name(node, ctx) is None else None
        if ret is not None:  # get_rank(): a module helper returning int(os.environ["RANK"])
            return is_rank_value(model, ret[0], ret[1], _depth + 1)
    if t is ast.Subscript and model.qualname(node.value, ctx) == "os.environ":
        return model.const(node.slice, ctx) in ("RANK", "LOCAL_RANK")
    if t in (ast.Name, ast.Attribute):
        values = model.values(node, ctx)
        if values and len(values) == 1:
            value, vctx = values[0]
            if value is not expr and type(value) in (ast.Call, ast.Subscript):
                return is_rank_value(model, value, vctx, _depth + 1)
    return False


WORLD_SIZE_APIS = ("torch_xla.runtime.world_size", "torch_xla.core.xla_model.xrt_world_size",
                   "torch.distributed.get_world_size")
_WORLD_SIZE_NAMES = ("world_size", "num_replicas", "n_replicas", "num_devices", "n_devices", "nprocs")


def _is_world_size(model, expr, ctx) -> bool:
    """``xr.world_size()`` / ``xm.xrt_world_size()`` / ``dist.get_world_size()``, or a name
    bound from one (a name that says it is the world size and cannot be seen counts too:
    the branch is then the author's single-replica path)."""
    if type(expr) is ast.Call:
        return model.call_name(expr, ctx) in WORLD_SIZE_APIS
    if type(expr) in (ast.Name, ast.Attribute):
        values = model.values(expr, ctx)
        if values:
            return all(type(v) is ast.Call and model.call_name(v, c) in WORLD_SIZE_APIS for v, c in values)
        ident = expr.id if type(expr) is ast.Name else expr.attr
        return ident.lower() in _WORLD_SIZE_NAMES
    return False


_FLIP = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


def single_replica_branch(model: Model, ctx: Ctx) -> bool:
    """Code that runs only with one replica: the ``else`` of ``if xr.world_size() > 1:``,
    the body of ``if world_size == 1:`` (and after ``if world_size > 1: ...; continue``)."""
    for frame in ctx.frames:
        if not isinstance(frame, tuple):
            continue
        test, polarity = frame
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, polarity = test.operand, not polarity
        tests = test.values if polarity and type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
        for t in tests:
            if type(t) is not ast.Compare or len(t.ops) != 1 or type(t.ops[0]) not in _FLIP:
                continue
            left, op, right = t.left, type(t.ops[0]), t.comparators[0]
            if _is_world_size(model, right, ctx) and not _is_world_size(model, left, ctx):
                left, right, op = right, left, _FLIP[op]
            if not _is_world_size(model, left, ctx):
                continue
            n = model.const(right, ctx)
            if type(n) is not int:
                continue
            # the set of world sizes (>= 1) for which the branch taken runs
            holds = {ast.Gt: lambda w: w > n, ast.Lt: lambda w: w < n, ast.GtE: lambda w: w >= n,
                     ast.LtE: lambda w: w <= n, ast.Eq: lambda w: w == n, ast.NotEq: lambda w: w != n}[op]
            if not any(holds(w) == polarity for w in range(2, max(n, 2) + 2)):
                return True  # no multi-replica world size takes this branch
    return False

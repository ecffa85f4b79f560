"""Gradient reductions: the calls that all-reduce gradients across replicas (what XLA201
counts as a reduction before an optimizer step, and what project summaries record).

- :func:`reduces_gradients`: ``xm.reduce_gradients(opt)`` / ``xm.optimizer_step(opt)``, a
  collective over gradients, a module helper doing one of those, or an imported helper
  whose name says it reduces.
- :func:`reduces_directly`: the same for the call itself, helpers not followed.

Both take the module's :class:`~flake8_xla.model.Model` first and memoise in its
``_cache``. What cannot be seen counts as a reduction (unknown never fires).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .scopes import UNKNOWN, Ctx

if TYPE_CHECKING:  # the facade imports the model's modules: annotations only
    from . import Model

GRADIENT_REDUCERS = (
    "torch_xla.core.xla_model.reduce_gradients",
    "torch_xla.core.xla_model.all_reduce_bucketized_gradients",
)
OPTIMIZER_STEP = "torch_xla.core.xla_model.optimizer_step"
_MAYBE_REDUCER = ("reduce", "all_reduce", "allreduce", "sync_grad", "average_grad", "grad_sync")
#: collectives and the argument (keyword, position) holding what they reduce
REDUCED_ARG = {
    "torch_xla.core.xla_model.all_reduce": ("inputs", 1),
    "torch_xla.core.xla_model.reduce_scatter": ("input", 1),
    "torch.distributed.all_reduce": ("tensor", 0),
    "torch.distributed.reduce_scatter": ("input_list", 1),
}


def reduces_gradients(model: Model, call: ast.Call, ctx: Ctx) -> bool:
    """``xm.reduce_gradients(opt)`` / ``xm.optimizer_step(opt)``, a collective over
    gradients (``p.grad``, a list of them, a tensor built from them; what cannot be seen
    counts too), a module helper that does one of those at any (bounded) depth, or an
    imported non-torch helper whose name says it reduces (``allreduce_gradients(model)``:
    unknown, so not a finding). What is reduced decides, never a variable's name: an
    all-reduced grad norm reduces nothing."""
    if reduces_directly(model, call, ctx):
        return True
    if model.call_name(call, ctx) is not None:
        return False
    table = model._cache.get("reducing_funcs")
    if table is None:
        direct = {id(f): any(reduces_directly(model, c, x) for c, x in f.calls) for f in model.functions}
        table = model.closure_over_callers("reducing_funcs", direct)
    return any(table.get(id(f)) for f in model.function_of(call.func, ctx))


def reduces_directly(model: Model, call: ast.Call, ctx: Ctx) -> bool:
    """``call`` itself reduces gradients: ``xm.reduce_gradients``,
    ``xm.all_reduce_bucketized_gradients``, ``xm.optimizer_step`` (it reduces, then steps),
    a collective (``xm.all_reduce``, ``dist.all_reduce``, ...) whose reduced argument holds
    or may hold gradients, or a call of a non-torch name that says it reduces. Module
    helpers are not followed (:func:`reduces_gradients` follows them)."""
    q = model.call_name(call, ctx)
    if q is None:
        return False
    if q in GRADIENT_REDUCERS or q == OPTIMIZER_STEP:  # optimizer_step reduces, then steps
        return True
    if q in REDUCED_ARG:
        arg = model.kwarg(call, *REDUCED_ARG[q])
        return arg is UNKNOWN or (arg is not None and _gradients(model, arg, ctx) is not False)
    return not q.startswith(("torch.", "torch_xla.")) and any(w in q.rsplit(".", 1)[-1].lower() for w in _MAYBE_REDUCER)


def _gradients(model, expr, ctx):
    """Whether ``expr`` holds gradients: True (``p.grad``, ``[p.grad for p in ...]``,
    ``torch.cat([p.grad.view(-1) ...])``, through names and module helpers' returns), False
    (visibly something else: a loss, a norm from ``clip_grad_norm_``, a constant), None
    (cannot be seen: a parameter, a loop variable, an unknown callable's result)."""
    key = ("grads", id(expr))
    if key in model._cache:
        return model._cache[key]
    model._cache[key] = None  # cycles: unknown
    result = _gradients_uncached(model, expr, ctx)
    model._cache[key] = result
    return result


def _combine(results):
    results = list(results)
    if True in results:
        return True
    return None if None in results else False


def _gradients_uncached(model, expr, ctx, limit=64):
    nodes = 0
    for node in ast.walk(expr):
        nodes += 1
        if nodes > limit:
            return None
        if type(node) is ast.Attribute and node.attr == "grad":
            return True
    t = type(expr)
    if t is ast.Constant:
        return False
    if t is ast.Name:
        bindings = model.lookup(expr.id, ctx, getattr(expr, "lineno", None))
        if not bindings or any(kind != "value" or b_ctx is None for _, kind, _, b_ctx in bindings):
            return None
        return _combine(_gradients(model, target, b_ctx) for _, _, target, b_ctx in bindings)
    if t is ast.Attribute:
        values = model.values(expr, ctx)
        if values:
            return _combine(_gradients(model, v, c) if v is not None and c is not None else None for v, c in values)
        return _gradients(model, expr.value, ctx)  # outputs.loss: what the receiver holds
    if t in (ast.List, ast.Tuple, ast.Set):
        return _combine(_gradients(model, e, ctx) for e in expr.elts) if expr.elts else False
    if t is ast.Starred:
        return _gradients(model, expr.value, ctx)
    if t is ast.BinOp:
        return _combine([_gradients(model, expr.left, ctx), _gradients(model, expr.right, ctx)])
    if t is ast.UnaryOp:
        return _gradients(model, expr.operand, ctx)
    if t is ast.Subscript:
        return _gradients(model, expr.value, ctx)
    if t is ast.Call:
        args = [a for a in expr.args] + [k.value for k in expr.keywords]
        inputs = [_gradients(model, a, ctx) for a in args]
        if True in inputs:
            return True
        q = model.call_name(expr, ctx)
        if q == "torch.autograd.grad":
            return True
        if q is not None:
            return False if q.startswith(("torch.", "torch_xla.")) else None
        funcs = model.function_of(expr.func, ctx)
        if len(funcs) == 1 and funcs[0].returns:
            return _combine(_gradients(model, v, c) for v, c in funcs[0].returns)
        if funcs:
            return None
        f = expr.func
        if type(f) is ast.Attribute:
            return _gradients(model, f.value, ctx)  # loss.detach(): derived from the receiver
        if type(f) is ast.Name:
            bindings = model.lookup(f.id, ctx, None)
            if bindings and all(kind in ("param", "value") for _, kind, _, _ in bindings):
                return False  # model(x), criterion(out, y): a forward pass, given no gradients
        return None
    return None

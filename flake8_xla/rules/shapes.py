"""XLA5 (shapes): ops whose output shape depends on the data, in the code that runs once
per training step."""

from __future__ import annotations

import ast

from ..model.tensors import DEVICE
from ..registry import Rule, rule

#: torch functions whose output shape depends on the values of their (first) input
DYNAMIC_FUNCS = {
    "torch.nonzero": "nonzero", "torch.argwhere": "argwhere", "torch.masked_select": "masked_select",
    "torch.unique": "unique", "torch.unique_consecutive": "unique_consecutive",
}
#: the same as tensor methods
DYNAMIC_METHODS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"})


@rule
class DynamicShapeOp(Rule):
    """## What it does
    Flags ops with a data-dependent output shape on device tensors in the training step
    (a step loop's body, the module functions it calls, a `forward`):
    `torch.nonzero(x)` / `x.nonzero()`, `torch.argwhere`, `torch.masked_select`,
    `torch.unique` / `unique_consecutive`, one-argument `torch.where(cond)`, and boolean-mask
    indexing `x[x > 0]` / `x[mask]` where the mask is a comparison of device tensors, by an
    operator or a tensor method (`labels.ne(-100)`, `.eq()`, `.gt()`, `.lt()`, `.ge()`, `.le()`,
    `torch.ne(x, 0)`, `.isfinite()`), a device tensor's `.bool()`, or `.logical_not()` /
    `~` / `&` / `|` of such masks, alone or in one position of a tuple index
    (`x[:, keep]` with `keep = torch.rand(n, device=x.device) >= p`).

    ## Why is this bad?
    XLA compiles one graph per set of shapes. An op whose result size depends on the data
    gives a new shape, so a new compilation, whenever the data changes, and reading the
    size forces a device sync (torch_xla `docs/source/learn/troubleshoot.md`, caveat on
    `nonzero`; measured on 2.9: 4 compilations over 6 steps instead of 1).

    ## Known problems
    Only device tensors count: a value the model cannot place (a parameter of a helper, a
    value from an unseen call) is unknown and not reported (a parameter of `forward` is a
    device tensor where some call of an instance passes one: `model(x.to(device))`; a
    helper's batch moved with `x.to(device)` is one where every call of the helper in the
    module passes a batch and the XLA device), nor are CPU tensors
    (pre-processing, collate functions), code outside the step, evaluation loops, reads
    gated by `if step % N == 0:`, or the experimental bounded dynamic shape mode
    (`XLA_EXPERIMENTAL="nonzero:masked_select"`). A mask bound to a name is followed
    through plain assignments only.

    ## Example
    ```python
    loss = per_token_loss[mask > 0].mean()
    ```

    ## Use instead
    ```python
    m = (mask > 0).to(per_token_loss.dtype)
    loss = (per_token_loss * m).sum() / m.sum().clamp_min(1)   # or torch.where(c, x, 0)
    ```

    ## References
    - torch_xla `docs/source/learn/troubleshoot.md` (dynamic shapes: `nonzero`, masked indexing)
    - torch_xla `docs/source/perf/recompilation.md` ("From operator output": `nonzero`, `unique`)
    - torch_xla `docs/source/learn/dynamic_shape.md` (bounded dynamic shape is experimental)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA503"
    name = "dynamic-shape-op"
    message = "data-dependent output shape in the training step"
    fix = "use x * mask or torch.where(cond, x, 0)"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the data-dependent call (`torch.nonzero(...)`) or boolean-mask subscript (`x[mask]`)'
    bad = [
        "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader):\n"
        "    for x, y in loader:\n"
        "        out = model(x)\n"
        "        loss = loss_fn(out[out > 0], y[out > 0])\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader):\n"
        "    for x, y in loader:\n"
        "        out = model(x)\n"
        "        loss = loss_fn(torch.where(out > 0, out, 0), y)\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]

    def check(self, model):
        seen: set[int] = set()
        for node, ctx, gated, _ in model.step_sites():
            if gated or id(node) in seen:
                continue
            text = None
            if type(node) is ast.Call:
                text = _dynamic_call(model, node, ctx)
            elif type(node) is ast.Subscript and model.tensor_kind(node.value, ctx) == DEVICE \
                    and _mask_index(model, node.slice, ctx):
                text = "boolean-mask indexing"
            if text is not None and model.in_xla_code(ctx):  # asked last: the rarer fact
                seen.add(id(node))
                yield self.finding(node, f"{text}: data-dependent shape, a compile per shape")


def _dynamic_call(model, call, ctx) -> str | None:
    q = model.call_name(call, ctx)
    if q in DYNAMIC_FUNCS and call.args and model.tensor_kind(call.args[0], ctx) == DEVICE:
        return f"torch.{DYNAMIC_FUNCS[q]}()"
    if q == "torch.where" and len(call.args) == 1 and not call.keywords \
            and model.tensor_kind(call.args[0], ctx) == DEVICE:
        return "one-argument torch.where(cond)"
    f = call.func
    if q is None and type(f) is ast.Attribute and f.attr in DYNAMIC_METHODS \
            and model.tensor_kind(f.value, ctx) == DEVICE:
        return f".{f.attr}()"
    return None


def _mask_index(model, index, ctx) -> bool:
    """A subscript's index that masks by a boolean device mask: the mask itself (``x[m]``)
    or a mask in one position of a tuple index (``x[:, keep]``, ``x[..., m]``; the first
    8 positions)."""
    if type(index) is ast.Tuple:
        return any(_device_mask(model, e, ctx) for e in index.elts[:8] if type(e) is not ast.Slice)
    return _device_mask(model, index, ctx)


def _device_mask(model, expr, ctx, depth: int = 0) -> bool:
    """``expr`` is a boolean mask built by comparing device tensors: ``x > 0``, ``~m``,
    ``m1 & m2``, or a name bound (every binding) to one of those."""
    if depth > 4:
        return False
    t = type(expr)
    if t is ast.Compare:
        return len(expr.ops) == 1 and type(expr.ops[0]) in (ast.Gt, ast.GtE, ast.Lt, ast.LtE, ast.Eq, ast.NotEq) \
            and any(model.tensor_kind(e, ctx) == DEVICE for e in (expr.left, expr.comparators[0]))
    if t is ast.UnaryOp and type(expr.op) is ast.Invert:
        return _device_mask(model, expr.operand, ctx, depth + 1)
    if t is ast.BinOp and type(expr.op) in (ast.BitAnd, ast.BitOr):
        return _device_mask(model, expr.left, ctx, depth + 1) or _device_mask(model, expr.right, ctx, depth + 1)
    if t is ast.Call:
        return _mask_call(model, expr, ctx, depth)
    if t is ast.Name:
        values = model.values(expr, ctx)
        return bool(values) and all(_device_mask(model, v, c, depth + 1) for v, c in values if c is not None)
    return False


#: tensor methods (and torch functions) that compare: ``labels.ne(pad)`` is ``labels != pad``
_COMPARE_METHODS = frozenset({"ne", "eq", "gt", "lt", "ge", "le", "not_equal", "greater", "less",
                              "greater_equal", "less_equal", "isnan", "isinf", "isfinite"})
#: tensor methods that keep (``logical_not``) or make (``bool``) a mask of their receiver
_MASK_METHODS = frozenset({"logical_not", "logical_and", "logical_or", "logical_xor", "bool"})


def _mask_call(model, call, ctx, depth) -> bool:
    """A mask built by a call: ``x.ne(0)`` / ``torch.ne(x, 0)`` (any comparison method) on a
    device tensor, ``x.bool()`` of one, ``m.logical_not()`` / ``torch.logical_not(m)`` of a
    mask (or of a device tensor)."""
    f = call.func
    q = model.call_name(call, ctx)
    if q is not None:
        name = q.rsplit(".", 1)[1] if q.startswith("torch.") and q.count(".") == 1 else None
        if name in _COMPARE_METHODS or name in _MASK_METHODS and name != "bool":
            return any(_device_mask(model, a, ctx, depth + 1) or model.tensor_kind(a, ctx) == DEVICE
                       for a in call.args[:2])
        return False
    if type(f) is not ast.Attribute:
        return False
    if f.attr in _COMPARE_METHODS or f.attr in _MASK_METHODS:
        if f.attr == "bool" and (call.args or call.keywords):
            return False
        return model.tensor_kind(f.value, ctx) == DEVICE or _device_mask(model, f.value, ctx, depth + 1)
    return False

"""XLA5 (host side of the step): device-to-host reads and Python control flow on tensor
values in the code that runs once per training step."""

from __future__ import annotations

import ast
import bisect
import re

from ..model.syncs import DEVICE_COLLECTIVES
from ..model.tensors import DEVICE, READ_METHODS
from ..registry import Rule, rule
from ._common import at_least, render, xm_spelling

_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})
_CAST_BUILTINS = ("float", "int", "bool")
_LOGGER = re.compile(r"_*(log|logger|\w*_logger|logging)")
_PRINTERS = ("torch_xla.core.xla_model.master_print",)


def _builtin(model, func, ctx, names):
    return type(func) is ast.Name and func.id in names and not model.lookup(func.id, ctx, None)


def _short(node) -> str | None:
    """The source of a small one-line node (``loss.item()``), else None."""
    line, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if line is None or line != end or (node.end_col_offset or 0) - node.col_offset > 32:
        return None
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse of a tree ast.parse built
        text = ""
    if not text or len(text) > 32 or "\n" in text:
        return None
    return text


def _device(model, expr, ctx) -> bool:
    """A device tensor where the step reads it: visibly one (``tensor_kind``), a parameter
    of a helper that some call of the step passes one (``step_param_device``), an item
    of a dict parameter some such call passes with a device tensor there (``outputs["loss"]``),
    or an attribute of a parameter some such call passes an instance whose class sets it to
    a device tensor (``trainer.last_loss``); also through a name bound once to either
    (``norm = outputs["grad_norm"]``)."""
    if model.tensor_kind(expr, ctx) == DEVICE or model.step_param_device(expr, ctx):
        return True
    if type(expr) is ast.Name:
        values = model.values(expr, ctx)
        if not values or len(values) != 1 or type(values[0][0]) not in (ast.Subscript, ast.Attribute) \
                or values[0][1] is None:
            return False
        expr, ctx = values[0]
    if type(expr) is ast.Attribute:
        return model.step_param_attr_device(expr, ctx)
    return type(expr) is ast.Subscript and model.step_param_item_device(expr, ctx)


def _formats_device(model, expr, ctx) -> bool:
    """``expr`` turns a device tensor into text: the tensor itself, an f-string, ``%`` or
    ``.format`` / ``str()`` of one."""
    t = type(expr)
    if t is ast.JoinedStr:  # (a value the step hands in counts: a callback's `loss`, `trainer.last_loss`)
        return any(type(v) is ast.FormattedValue and _device(model, v.value, ctx) for v in expr.values)
    if t is ast.BinOp and type(expr.op) is ast.Mod and type(expr.left) in (ast.Constant, ast.JoinedStr):
        right = expr.right
        items = right.elts if type(right) is ast.Tuple else [right]
        return any(_device(model, x, ctx) for x in items)
    if t is ast.Call:
        f = expr.func
        if type(f) is ast.Attribute and f.attr == "format" and type(f.value) is ast.Constant:
            return any(_device(model, a, ctx) for a in list(expr.args) + [k.value for k in expr.keywords])
        if _builtin(model, f, ctx, ("str", "repr")) and expr.args:
            return _device(model, expr.args[0], ctx)
    return _device(model, expr, ctx)


def _is_logging(model, call, ctx) -> bool:
    f = call.func
    if type(f) is not ast.Attribute or f.attr not in _LOG_METHODS:
        return False
    q = model.qualname(f, ctx)
    if q is not None:
        return q.startswith("logging.")
    base = f.value
    ident = base.id if type(base) is ast.Name else base.attr if type(base) is ast.Attribute else ""
    if not _LOGGER.fullmatch(ident.lower()):
        return False
    # a logger of a project class (self.logger = MetricLogger()): its method is known code,
    # whose own reads are reported there (project mode), not a library sink here
    return model.project_lookup is None or not (model.callee_helpers(call, ctx) or _project_objects(model, call, ctx))


def _project_objects(model, call, ctx) -> bool:
    """Every value the receiver of ``obj.m(...)`` may hold is built by a project class with a
    method ``m`` (``self.logger`` set to ``MetricLogger()`` in ``__init__`` and to
    ``NullLogger()`` in ``reset``)."""
    recv = call.func.value
    values = model.values(recv, ctx)
    func = ctx.func
    if not values and type(recv) is ast.Attribute and type(recv.value) is ast.Name and func is not None \
            and func.cls is not None and func.params and recv.value.id == func.params[0]:
        values = list(func.cls.attrs.get(recv.attr, ()))  # every `self.logger = ...` of the class
    if not values or len(values) > 8:
        return False
    for v, c in values:
        if type(v) is not ast.Call or c is None:
            return False  # (call_name names the import: loggers.MetricLogger; the lookup says if it is the project's)
        try:
            helper = model.project_helper(v.func, c, method=call.func.attr)
        except (Exception, RecursionError):
            helper = None
        if helper is None:
            return False
    return True


#: what a call's spelling must show to be one of the reads :func:`host_reads` looks for
_READ_ATTRS = READ_METHODS | _LOG_METHODS | {"to", "format"}
_READ_BUILTINS = frozenset((*_CAST_BUILTINS, "print"))
_READ_CALLS = frozenset(("numpy.array", "numpy.asarray", *_PRINTERS))


def _may_read(model, call, ctx) -> bool:
    """A call spelled like a read (``x.item()``, ``float(x)``, ``print``, logging, ``np.array``,
    ``"...".format``): the only calls :func:`host_reads` asks anything about."""
    f = call.func
    t = type(f)
    if t is ast.Attribute and f.attr in _READ_ATTRS or t is ast.Name and f.id in _READ_BUILTINS:
        return True
    return model.call_name(call, ctx) in _READ_CALLS


def _call_read(model, node, ctx, consumed) -> str | None:
    """The text naming the read when call ``node`` reads a device tensor on the host
    (``.item()``, ``float(t)``, ``np.array(t)``, ``print`` / logging / ``str.format`` of one),
    else None; the arguments a print or format consumes go to ``consumed``."""
    if type(node) is not ast.Call or not _may_read(model, node, ctx) or not model.in_xla_code(ctx):
        return None
    f = node.func
    text = None
    if type(f) is ast.Attribute and (f.attr in READ_METHODS or f.attr == "to") and not node.keywords \
            and (f.attr != "to" or model._to_cpu(node, ctx)) \
            and (f.attr == "to" or not node.args) and _derived_device(model, f.value, ctx):
        text = _short(node) or f"tensor.{f.attr}()"
    elif _builtin(model, f, ctx, _CAST_BUILTINS) and len(node.args) == 1 and not node.keywords \
            and _derived_device(model, node.args[0], ctx):
        text = _short(node) or f"{f.id}(tensor)"
    elif model.call_name(node, ctx) in ("numpy.array", "numpy.asarray") and node.args \
            and model.tensor_kind(node.args[0], ctx) == DEVICE:
        text = _short(node) or "np.array(tensor)"
    elif _builtin(model, f, ctx, ("print",)) or _is_logging(model, node, ctx) \
            or model.call_name(node, ctx) in _PRINTERS:
        args = list(node.args)
        if any(_formats_device(model, a, ctx) for a in args):
            consumed.update(id(a) for a in args)
            name = "print" if type(f) is ast.Name else render(f)
            text = _short(node) or f"{name}() of a tensor"
    elif type(f) is ast.Attribute and f.attr == "format" and type(f.value) is ast.Constant \
            and _formats_device(model, node, ctx):
        consumed.add(id(node))
        text = _short(node) or "str.format() of a tensor"
    return text


def _format_read(model, node, ctx, consumed) -> str | None:
    """The text naming the read when an f-string or ``%`` format turns a device tensor into
    text (one a print or format call has not already consumed), else None."""
    if id(node) in consumed or type(node) not in (ast.JoinedStr, ast.BinOp):
        return None
    if type(node) is ast.BinOp and not (type(node.op) is ast.Mod and type(node.left) in (ast.Constant, ast.JoinedStr)):
        return None
    if model.in_xla_code(ctx) and _formats_device(model, node, ctx):
        return _short(node) or ("an f-string of a tensor" if type(node) is ast.JoinedStr else "'%' formatting of a tensor")
    return None


def host_reads(model):
    """``(node, ctx, gated, text, after_sync)`` for every device-to-host read in the step:
    before the step's sync, and (``after_sync``) after it when what is read is a collective
    computed after that sync (:func:`_post_sync_reads`)."""
    key = "host_reads"
    if key in model._cache:
        return model._cache[key]
    out = []
    consumed: set[int] = set()
    sites = model.step_sites()
    for node, ctx, gated, _ in sites:
        text = _call_read(model, node, ctx, consumed)
        if text and not _evaluation_result(model, _read_subjects(node), ctx):
            out.append((node, ctx, gated, text, False))
    for node, ctx, gated, _ in sites:
        text = _format_read(model, node, ctx, consumed)
        if text and not _evaluation_result(model, [node], ctx):
            out.append((node, ctx, gated, text, False))
    out.extend(_post_sync_reads(model))
    model._cache[key] = out
    return out


def _evaluation_result(model, subjects, ctx) -> bool:
    """What is read is the result of an evaluation pass that ran before it in the same
    iteration: a value accumulated in a loop over a data loader with no backward and no
    optimizer step (``correct += ...`` in ``for x, y in val_loader:``), or computed from one
    after it (``acc = xm.all_reduce(xm.REDUCE_SUM, correct)``), read after that loop in the
    same function (``evaluate()`` called every N steps). That loop ran (and synced) the
    evaluation's graphs; one read of its result at the end is no extra per-step sync."""
    func = ctx.func
    index = model._cache.get("eval_loops")
    if index is None:  # id(function or None) -> its loops, built once
        index = model._cache["eval_loops"] = {}
        for lp in model.loops:
            index.setdefault(id(lp.ctx.func), []).append(lp)
    key = ("eval_loops", id(func))
    loops = model._cache.get(key)
    if loops is None:
        owned = index.get(id(func), ())
        loops = [] if len(owned) > 64 else [lp for lp in owned if _evaluation_loop(model, lp)]
        model._cache[key] = loops = loops[:8]  # bounded work per read
    if not loops:
        return False
    for loop in loops:
        node = loop.node
        if len(loop.ctx.loops) != len(ctx.loops) or any(a is not b for a, b in zip(loop.ctx.loops, ctx.loops)):
            continue  # not in the same iteration of the same loops
        span = (node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno)
        if any(_from_loop(model, e, ctx, span) for e in subjects):
            return True
    return False


_LOADER_NAME = re.compile(r"(?i)(?:.*loader\w*|(?:\w+_)?dl)")


def _evaluation_loop(model, loop) -> bool:
    """A ``for`` loop over a data loader (one the model sees, or a name that says loader:
    ``val_loader``, ``eval_dl``) that runs no backward pass and no optimizer step."""
    node = loop.node
    if type(node) not in (ast.For, ast.AsyncFor) or model.is_step_loop(loop):
        return False
    if model._eval_loop(node, loop.ctx):
        return True
    it = node.iter
    ident = it.id if type(it) is ast.Name else it.attr if type(it) is ast.Attribute else None
    return ident is not None and bool(_LOADER_NAME.fullmatch(ident))


def _from_loop(model, expr, ctx, span, depth: int = 0) -> bool:
    """``expr``, read after the loop spanning lines ``span``, names a value bound inside that
    loop, or bound after it from one (a few levels of assignments; memoised per expression
    and loop, so linear however many definitions reach)."""
    if depth > 4:
        return False
    key = ("from_loop", id(expr), span)
    cache = model._cache
    if key in cache:
        return cache[key]
    cache[key] = False  # (a cycle of assignments: no)
    found = False
    todo = [expr]
    budget = 64
    while todo and budget and not found:
        budget -= 1
        n = todo.pop()
        t = type(n)
        if t is ast.Name:
            line = getattr(n, "lineno", None)
            if line is None or line <= span[1]:
                continue
            for b_line, kind, target, b_ctx in (model.lookup(n.id, ctx, line) or ())[:8]:
                if span[0] < b_line <= span[1] or kind == "value" and b_line > span[1] \
                        and isinstance(target, ast.AST) and _from_loop(model, target, b_ctx or ctx, span, depth + 1):
                    found = True
                    break
        elif t not in (ast.Constant, ast.Lambda):
            todo.extend(ast.iter_child_nodes(n))
    cache[key] = found
    return found


def _post_sync_reads(model) -> list:
    """Reads after the step's sync of a collective computed after it
    (``torch_xla.sync(); print(xm.all_reduce(xm.REDUCE_SUM, loss).item())``): the sync ran the
    step, but the collective is new device work, so each read runs one more graph every step.
    A value computed before the sync (or before a later one) is only copied: not reported."""
    post = [site for site in model.post_sync_sites()]
    if not post:
        return []
    fresh_calls = {id(n): (id(ctx.func), ep) for n, ctx, _, _, ep in post
                   if type(n) is ast.Call and model.call_name(n, ctx) in DEVICE_COLLECTIVES}
    if not fresh_calls:
        return []
    out = []
    consumed: set[int] = set()
    for node, ctx, gated, _, ep in post:
        if type(node) is not ast.Call or not _may_read(model, node, ctx) \
                or not any(_fresh(model, e, ctx, fresh_calls, (id(ctx.func), ep)) for e in _read_subjects(node)):
            continue
        text = _call_read(model, node, ctx, consumed)
        if text:
            out.append((node, ctx, gated, text, True))
    for node, ctx, gated, _, ep in post:
        if type(node) is ast.Call:
            continue
        text = _format_read(model, node, ctx, consumed)
        if text and _fresh(model, node, ctx, fresh_calls, (id(ctx.func), ep)):
            out.append((node, ctx, gated, text, True))
    return out


def _read_subjects(call) -> list:
    """What a read call reads: the receiver of ``t.item()``, the arguments otherwise."""
    f = call.func
    if type(f) is ast.Attribute and (f.attr in READ_METHODS or f.attr == "to"):
        return [f.value]
    return list(call.args) + [k.value for k in call.keywords]


def _fresh(model, expr, ctx, fresh_calls, where, depth: int = 0) -> bool:
    """``expr`` is (or is computed from) a collective call made after the last sync before
    the read (``where``: the read's function and sync epoch): the collective itself, a tensor
    method or arithmetic on it, an f-string of it, or a name every binding of which is one."""
    if depth > 6 or expr is None:
        return False
    key = ("fresh", id(expr), where)
    cache = model._cache
    if key not in cache:
        cache[key] = False  # (a cycle of assignments: no)
        cache[key] = _fresh_uncached(model, expr, ctx, fresh_calls, where, depth)
    return cache[key]


def _fresh_uncached(model, expr, ctx, fresh_calls, where, depth) -> bool:
    t = type(expr)
    if t is ast.Call:
        if fresh_calls.get(id(expr)) == where:
            return True
        f = expr.func
        if type(f) is ast.Attribute and f.attr not in READ_METHODS:
            return _fresh(model, f.value, ctx, fresh_calls, where, depth + 1)
        return False
    if t is ast.Name:
        bindings = model.lookup(expr.id, ctx, getattr(expr, "lineno", None))
        return bool(bindings) and len(bindings) <= 8 and all(
            kind == "value" and _fresh(model, target, b_ctx or ctx, fresh_calls, where, depth + 1)
            for _, kind, target, b_ctx in bindings)
    if t is ast.BinOp:
        return _fresh(model, expr.left, ctx, fresh_calls, where, depth + 1) \
            or _fresh(model, expr.right, ctx, fresh_calls, where, depth + 1)
    if t in (ast.Attribute, ast.Subscript):
        return _fresh(model, expr.value, ctx, fresh_calls, where, depth + 1)
    if t is ast.JoinedStr:
        return any(type(v) is ast.FormattedValue and _fresh(model, v.value, ctx, fresh_calls, where, depth + 1)
                   for v in expr.values)
    if t in (ast.Tuple, ast.List):
        return any(_fresh(model, e, ctx, fresh_calls, where, depth + 1) for e in expr.elts)
    return False


@rule
class HostSyncInStep(Rule):
    """## What it does
    Flags reads of a device tensor's value in the code that runs once per training step:
    `.item()`, `.tolist()`, `.numpy()`, `.cpu()`, `.to("cpu")`, `float()` / `int()` /
    `bool()` of a tensor, `np.array(tensor)`, and `print`, f-strings, `%` or `str.format`
    of a tensor (a logging call with a tensor argument too). The step is the body of a
    loop that runs the backward or the optimizer step, the module functions it calls (any
    depth, bounded), a `torch_xla.compile`d step, and the `forward` of `nn.Module`
    classes. A loop is a training step only when an iteration also updates the weights
    (`opt.step()`, `xm.optimizer_step`, `scaler.step(opt)`, in the loop or a helper): a
    gradient check with a backward and no update is not. A helper's parameter is a device
    tensor when a call from the step passes one, also as a keyword its `**kwargs` collects
    (`logger.update(loss=loss)` into `for k, v in kwargs.items(): v.item()`). Reported at
    the read.

    ## Why is this bad?
    XLA tensors are lazy: the step is traced and runs as one graph at the sync. Reading a
    value forces the graph so far to compile and run now and copies the result to the
    host, then the rest of the step runs as another graph: an extra execution and a
    transfer every step (in torch_xla 2.9 one `.item()` per step doubled the executions).

    ## Known problems
    A read in the branch of an `if` whose other branch holds every backward and optimizer
    step of the loop (`if train: loss.backward(); opt.step() else: total += loss.item()`,
    or after `if train: ...; continue`) runs in iterations that train nothing (an
    evaluation pass) and is not reported.
    A value counts as a device tensor only when the script shows it: a model call (a
    module class of the file, `torch.nn`, torchvision, timm, transformers), a loss
    function or torch op on device tensors, a batch of an `MpDeviceLoader`, or a value
    the back-propagated loss is computed from (a loss bound on one path to a device value
    and on another to an imported helper's result is back-propagated as a device value),
    and a value a loop draws from a dict of them (`for k, v in losses.items():`,
    `losses.values()`, the dict a display or `dict(...)` of device tensors, or a model's), an
    item of a dict display under a string key (`out["loss"]` of `out = {"loss": loss.detach()}`;
    a dict some code stores an item into, or one with a `**` entry, is unknown), also in a
    helper or another module's callback the step hands it to, an attribute of the trainer a
    callback is handed (`trainer.last_loss` when the trainer's step sets `self.last_loss =
    loss.detach()`), and the total norm
    `clip_grad_norm_` returns after a backward of the same function. Other parameters of helpers, a model that is a
    parameter and never feeds the loss, and values in comprehensions or lambdas are
    unknown and never reported; so is the result of a helper called with CPU tensors
    (`torch.randn(...)` without `device=`, `.cpu()`): a CPU reference run. A value read
    before its assignment in the loop body (the previous iteration's) is unknown too. Not reported inside `xm.add_step_closure(...)` (lambdas
    and functions passed there), after the loop, after `torch_xla.sync()`,
    `xm.mark_step()`, `xm.wait_device_ops()`, `xm.optimizer_step(..., barrier=True)` (but
    not after a barrier XLA204 reports as redundant in a loop over a device loader: its fix
    drops it, and the read then syncs), a compiled step call, a `with torch_xla.step():` or `with xp.StepTrace(...):` block in
    the same iteration (still a transfer, but no extra execution), unless what is read is
    an in-graph collective computed after that sync (`torch_xla.sync();
    xm.all_reduce(xm.REDUCE_SUM, loss).item()`, `all_gather`, `reduce_scatter`, a name bound
    to one, arithmetic on one): new device work, one more graph per read (fix: compute the
    collective before the sync and read it after; measured on 2.9 (CPU, one replica): 2
    executions a step instead of 1; `xm.mesh_reduce` returns a host value and is no such
    work), and not under eager mode. Other sinks (`wandb.log`, `writer.add_scalar`,
    `pbar.set_postfix`) are reported only when the tensor is read by one of the
    spellings above. Reads under a step gate (`if step % N == 0:`) are XLA507. A read under
    a test that says the value is no XLA tensor there (`if isinstance(v, (int, float)):`,
    the other branch of `isinstance(v, torch.Tensor)` / `torch.is_tensor(v)`, `if
    t.device.type == "cpu":`; also for XLA502 and XLA904) is not reported.

    ## Example
    ```python
    for x, y in loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        xm.optimizer_step(opt)
        running += loss.item()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        xm.optimizer_step(opt)
        running += loss.detach()       # stays on the device
    print(running.item())              # once, after the loop
    ```
    or hand the value to `xm.add_step_closure(lambda l: print(l.item()), args=(loss,))`,
    which runs after the step's sync.

    ## References
    - torch_xla `docs/source/learn/troubleshoot.md` "Known Performance Caveats" (`item()`)
      and "Compilation & Execution Analysis" (accessing a tensor's value before the sync)
    - torch_xla `docs/source/learn/xla-overview.md` / `xla-advanced.md` "Synchronous execution and blocking"
    - torch_xla `torch_xla/core/xla_model.py` `add_step_closure`
    - torch_xla `test/test_train_mp_mnist.py` (`_train_update` in a step closure)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA501"
    name = "host-sync-in-step"
    message = "a device read in the training step syncs the device every step"
    fix = "read it after the loop or in xm.add_step_closure"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the read: the `.item()` / `float(...)` / `print(...)` / logging call'
    bad = [
        "import torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader):\n"
        "    running = 0.0\n"
        "    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n"
        "        running += loss.item()\n",
    ]
    good = [
        "import torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader):\n"
        "    running = 0.0\n"
        "    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n"
        "        xm.add_step_closure(lambda l: print(l.item()), args=(loss,))\n"
        "    print(loss.item())\n",
    ]

    def check(self, model):
        for node, _, gated, text, after_sync in host_reads(model):
            if not gated and after_sync:
                yield self.finding(node, f"{text} after the sync runs one more graph every step",
                                   "move the collective before the sync")
            elif not gated:
                yield self.finding(node, f"{text} syncs the device every step",
                                   f"read it after the loop or in {xm_spelling(model)}.add_step_closure")


@rule
class HostSyncInGatedLogging(Rule):
    """## What it does
    Flags the same reads as XLA501 (`.item()`, `.cpu()`, `print` of a tensor, ...) when
    they run under a step gate such as `if step % N == 0:` inside the step. A hint: the
    cost is paid every N steps, not every step.

    ## Why is this bad?
    Each gated read still compiles and runs the graph so far and copies the value to the
    host in the middle of the step, so every N-th step runs as two graphs (and the
    different graph may need its own compilation). `xm.add_step_closure` runs the same
    logging after the step's own sync, with no extra execution.

    ## Known problems
    A gate is an `if` whose test compares a `%` expression (`step % N == 0`,
    `(i + 1) % N == 0`, `not step % N`, also inside `and`), or a literal `case` of `match
    step % N:` (`case 0:`, `case 0 | 50:`; not `case _:`); other conditions (`if
    step in log_steps:`) are not recognised as gates and the read is XLA501. Helpers
    called only under a gate are gated too. Everything XLA501 leaves alone is left alone
    here (step closures, after the loop or a sync, eager mode, values that cannot be seen),
    and so is the read of an evaluation pass's result after its loop in the same iteration
    (`evaluate()` called every N steps: `correct` accumulated in `for x, y in val_loader:`,
    or `xm.all_reduce(xm.REDUCE_SUM, correct)`, read at the end): the loop over a data
    loader (one the model sees, or a name saying loader) that runs no backward and no
    optimizer step ran the evaluation; one read of its result is no extra step sync (XLA501
    too). A read of the training step's own values there is still reported.

    ## Example
    ```python
    if step % 100 == 0:
        print(step, loss.item())
    ```

    ## Use instead
    ```python
    if step % 100 == 0:
        xm.add_step_closure(lambda s, l: print(s, l.item()), args=(step, loss))
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` `add_step_closure` ("runs after the step's sync")
    - torch_xla `test/test_train_mp_mnist.py` (gated logging through `xm.add_step_closure`)
    - torch_xla `docs/source/learn/troubleshoot.md` "Known Performance Caveats"
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA507"
    name = "host-sync-in-gated-logging"
    message = "a device read under a step gate syncs the device every N steps"
    fix = "log it in xm.add_step_closure"
    severity = "W"
    versions = "2.0+"
    hint = True
    reported_at = 'the read: the `.item()` / `float(...)` / `print(...)` / logging call'
    bad = [
        "import torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader):\n"
        "    for step, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n"
        "        if step % 100 == 0:\n"
        "            print(step, loss.item())\n",
    ]
    good = [
        "import torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader):\n"
        "    for step, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n"
        "        if step % 100 == 0:\n"
        "            xm.add_step_closure(lambda s, l: print(s, l.item()), args=(step, loss))\n",
    ]

    def check(self, model):
        for node, _, gated, text, after_sync in host_reads(model):
            if gated and after_sync:
                yield self.finding(node, f"{text} after the sync runs one more graph every N steps",
                                   "move the collective before the sync")
            elif gated:
                yield self.finding(node, f"{text} under a step gate syncs the device every N steps",
                                   f"log it in {xm_spelling(model)}.add_step_closure")


@rule
class TensorValueControlFlow(Rule):
    """## What it does
    Flags `if`, `while` and `assert` whose test is a device tensor's value (`if loss >
    best:`, `if torch.isnan(loss):`, `while mask.sum() > 0:`, `assert (y >= 0).all()`)
    in the step (see XLA501) or in the `forward` of an `nn.Module` class. Reported at
    the test.

    ## Why is this bad?
    Python must know the tensor's value to pick the branch, so the graph traced so far is
    compiled and run at the test and the value copied to the host: a sync in the middle
    of every step, and one graph per branch combination to compile.

    ## Known problems
    Conditions on Python values, shapes (`x.size(0)`, `x.shape`), config, `is None`
    and `in` tests are never reported, nor are tests whose value cannot be seen (a
    parameter of a helper or of `forward` that no visible call passes a device tensor:
    `model(x)` with `x` on the device, in the module or, in project mode, in another
    module, makes `forward`'s `x` one).
    Tests under a step gate (`if step % N == 0:`), in step closures, after a sync in the
    same iteration, or under eager mode are not reported. A test that reads the value
    itself (`if loss.item() > best:`) is XLA501 at the read.

    ## Example
    ```python
    loss = loss_fn(model(x), y)
    if torch.isnan(loss):
        continue
    ```

    ## Use instead
    ```python
    loss = loss_fn(model(x), y)
    loss = torch.where(torch.isnan(loss), torch.zeros_like(loss), loss)
    ```
    or decide on Python values (config, shapes); for data-dependent loops see
    `torch_xla.experimental.fori_loop` / `scan`.

    ## References
    - torch_xla `docs/source/learn/troubleshoot.md` ("Use `torch.where` to substitute control flow")
    - torch_xla `docs/source/perf/recompilation.md` "From control flow"
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` (tensor materialization during tracing)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA502"
    name = "tensor-value-control-flow"
    message = "if on a tensor value in the step: a device sync every step"
    fix = "use torch.where or a mask"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the test of the `if` / `while` / `assert`'
    bad = [
        "import torch, torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader):\n"
        "    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n"
        "        if torch.isnan(loss):\n"
        "            continue\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch, torch_xla.core.xla_model as xm\n"
        "def train(model, loss_fn, opt, loader, clip):\n"
        "    for x, y in loader:\n"
        "        if x.size(0) == 0 or clip is None:\n"
        "            continue\n"
        "        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]

    def check(self, model):
        for node, ctx, gated, _ in model.step_sites():
            if gated or type(node) not in (ast.If, ast.While, ast.Assert):
                continue
            test = node.test
            tctx = _ctx_in(model, test, ctx)
            if not model.in_xla_code(tctx) or not _tensor_test(model, test, tctx):
                continue
            kind = {ast.If: "if", ast.While: "while", ast.Assert: "assert"}[type(node)]
            short = _short(test)
            what = f"{kind} {short}" if short else f"this {kind}"
            yield self.finding(test, f"{what} branches on a tensor value: a device sync every step")


def _ctx_in(model, expr, ctx):
    """The recorded context of a call inside ``expr`` (its branch frames), else ``ctx``."""
    todo = [expr]
    while todo:
        n = todo.pop()
        if type(n) is ast.Call:
            found = model.call_ctx(n)
            if found is not None:
                return found
        todo.extend(ast.iter_child_nodes(n))
    return ctx


#: tensor methods whose result is a tensor on the receiver's device (a test of one reads it)
_TENSOR_VALUED = frozenset({"isnan", "isinf", "isfinite", "any", "all", "sum", "max", "min", "mean", "abs", "eq",
                            "ne", "gt", "lt", "ge", "le", "logical_not", "logical_and", "logical_or"})


def _tensor_test(model, test, ctx) -> bool:
    """``test`` reads a device tensor's value: one visibly (``tensor_kind``), or a tensor op,
    a comparison or a tensor method of a value the step hands in (:func:`_device`: a
    callback's ``learn.loss``, ``torch.isfinite(learn.loss)``: the torch functions and tensor
    methods of :data:`_TENSOR_VALUED`, whose result is a tensor on the same device).
    ``torch.is_tensor`` and the other ``torch.is_*`` metadata tests read nothing; a value
    compared to a host tensor (``torch.allclose(cpu_loss, loss)``) is not followed."""
    return _derived_device(model, test, ctx, tests=True)


#: tensor methods whose result stays on the tensor's device (besides :data:`_TENSOR_VALUED`)
_SAME_DEVICE_METHODS = frozenset({"argmax", "argmin", "float", "double", "half", "long", "int", "bool", "detach",
                                  "view", "reshape", "squeeze", "unsqueeze", "flatten", "clone", "sigmoid",
                                  "softmax", "exp", "log", "sqrt", "norm", "prod", "std", "var"})


def _derived_device(model, expr, ctx, tests: bool = False) -> bool:
    """``expr`` is a device tensor where the step reads it (:func:`_device`), or computed on
    the device from one by tensor ops: a comparison (not ``is``), arithmetic, the torch
    functions and tensor methods of :data:`_TENSOR_VALUED` and :data:`_SAME_DEVICE_METHODS`
    (``(logits.argmax(1) == labels).sum()`` with ``logits`` a device tensor the step hands
    in). With ``tests``, also through ``and``/``or``/``not`` (a condition's truth value)."""
    todo = [expr]
    while todo:
        n = todo.pop()
        t = type(n)
        if tests and t is ast.BoolOp:
            todo.extend(n.values)
        elif tests and t is ast.UnaryOp and type(n.op) is ast.Not:
            todo.append(n.operand)
        elif model.tensor_kind(n, ctx) == DEVICE:
            return True
        elif t in (ast.Name, ast.Attribute, ast.Subscript) and _device(model, n, ctx):
            return True
        elif t is ast.Compare and not any(type(op) in (ast.Is, ast.IsNot) for op in n.ops):
            todo.append(n.left)  # (`loss is None` reads no value)
            todo.extend(n.comparators)
        elif t is ast.BinOp and not tests:
            todo.extend((n.left, n.right))
        elif t is ast.Call:
            q = model.call_name(n, ctx) or ""
            if q[6:] in _TENSOR_VALUED and q.startswith("torch.") and q.count(".") == 1:
                todo.extend(a for a in n.args if type(a) is not ast.Starred)  # torch.isfinite(learn.loss)
            elif not q and type(n.func) is ast.Attribute and (
                    n.func.attr in _TENSOR_VALUED or not tests and n.func.attr in _SAME_DEVICE_METHODS):
                todo.append(n.func.value)
    return False


@rule
class HostReadInUnsyncedLoop(Rule):
    """## What it does
    Flags a loop in XLA code that is no training step (no backward, no optimizer step: an
    evaluation, inference or generation loop) and has no graph cut, where a device tensor is
    carried from one iteration to the next (`total += loss`, `x = x @ w`,
    `ids = torch.cat([ids, tok], 1)`) and the body reads a device tensor on the host
    (`.item()`, `.tolist()`, `.cpu()`, `float()` / `int()` / `bool()`, `print` or an
    f-string of one, `torch.tensor([t])`). Reported at the loop header, naming the read and
    the carried tensor.

    ## Why is this bad?
    A host read runs the graph of what it reads but cuts nothing: the lazy trace of every
    live tensor stays. A tensor computed from its own previous value keeps all the
    iterations so far in its graph, so each iteration's read compiles a new, longer graph
    and runs every earlier iteration again (quadratic time, a compile per iteration), and a
    carried value the loop does not read grows into one graph holding every iteration's
    work, compiled when it is finally read. `torch_xla.sync()` at the end of each iteration
    makes the carried tensor data: one small graph, compiled once. (A loop over an
    `MpDeviceLoader` syncs per batch; a training step loop is XLA302's and XLA501's.)

    ## Known problems
    Silent when the loop or a helper it calls syncs (`torch_xla.sync()`, `xm.mark_step()`,
    `with torch_xla.step():`, a compiled step), when it may sync where it cannot be seen
    (an imported helper, `next()` of an unseen iterator), when it draws from a device
    loader or from anything that may be one (an imported helper's result, a parameter some
    caller may fill with one; a `loader` every caller fills with a `DataLoader` is plain), in
    a step loop or the step's code, under eager mode, and when no tensor is carried: an
    evaluation loop that computes each batch afresh and reads it (`loss.item()` per batch)
    compiles one graph once (measured) and is not reported. A name rebound in the loop from
    something other than itself is not carried; attributes and dict items are not followed.

    ## Example
    ```python
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x.to(device))
            correct += (out.argmax(-1) == y.to(device)).sum()
            print(f"loss {loss_fn(out, y.to(device)).item():.3f}")
    ```

    ## Use instead
    ```python
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x.to(device))
            correct += (out.argmax(-1) == y.to(device)).sum()
            print(f"loss {loss_fn(out, y.to(device)).item():.3f}")
            torch_xla.sync()
    ```

    ## References
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` (the graph is cut at
      `torch_xla.sync()`; a host read executes what it needs)
    - torch_xla `docs/source/learn/troubleshoot.md` (graph growth and recompilation;
      `torch_xla.debug.metrics` `CompileTime`)
    - torch_xla `torch_xla/csrc/xla_graph_executor.cpp` at v2.9.0 (`GetTensors` syncs the
      read tensors with `force_ltc_data = false`: their IR is kept)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA508"
    name = "host-read-in-unsynced-loop"
    message = "host read in a loop where a device tensor grows: no graph cut"
    fix = "call torch_xla.sync() at the end of each iteration"
    severity = "W"
    versions = "2.0+"
    reported_at = "the header of the loop (the innermost that carries the tensor and holds the read)"
    fix_applicability = "safe"
    bad = [
        "import torch, torch_xla\n"
        "def run(w):\n"
        "    x = torch.ones(4, device=torch_xla.device())\n"
        "    for i in range(100):\n"
        "        x = x @ w\n"
        "        print(x.sum().item())\n",
    ]
    good = [
        "import torch, torch_xla\n"
        "def run(w):\n"
        "    x = torch.ones(4, device=torch_xla.device())\n"
        "    for i in range(100):\n"
        "        x = x @ w\n"
        "        print(x.sum().item())\n"
        "        torch_xla.sync()\n",
        "import torch, torch_xla\n"
        "def run(model, data):\n"
        "    dev = torch_xla.device()\n"
        "    for x in data:\n"
        "        print(model(torch.as_tensor(x).to(dev)).sum().item())  # nothing carried\n",
    ]

    def check(self, model):
        if not model.loops or model.eager_mode():
            return
        step_nodes = {id(n) for n, _, _, _ in model.step_sites()}
        fix = self.fix if at_least(self.settings, "2.4") else "call xm.mark_step() at the end of each iteration"
        facts = _LoopFacts(model)
        # innermost first: a loop sees the reads its inner loops left (those that report
        # cover their outer loops: one sync in the inner body is the fix); each read is
        # looked at in its innermost loop, then handed up at most 4 levels: linear in the
        # loops and their calls
        pending: dict[int, list] = {}  # id(loop node) -> reads (position, call, ctx, levels left) handed up
        covered: set[int] = set()
        found = []
        order = sorted(model.loops, key=lambda lp: len(lp.ctx.loops))
        in_step: dict[int, bool] = {}  # id(loop node) -> some loop around it is a step loop (outermost first)
        for lp in order:
            up = lp.ctx.loops[-1] if lp.ctx.loops else None
            in_step[id(lp.node)] = up is not None and (in_step.get(id(up.node), False) or model.is_step_loop(up))
        for loop in reversed(order):
            key = id(loop.node)
            parent = loop.ctx.loops[-1] if loop.ctx.loops else None
            reads = pending.pop(key, []) + [((c.lineno, c.col_offset), c, x, 4) for c, x in loop.own
                                            if id(c) not in step_nodes and _spelled_read(model, c, x)]
            if key in covered:
                if parent is not None:
                    covered.add(id(parent.node))
                continue
            text = None
            if reads and not in_step[key] and self._candidate(model, loop):
                carried = facts.carried(loop)
                if carried:
                    text = _first_read(model, sorted(reads, key=lambda r: r[0]), facts.tainted(loop, carried))
                    if text is not None:
                        found.append(self.finding(loop.node, f"{text} in a loop where {carried[0]} grows on the device: no graph cut", fix))
                        if parent is not None:
                            covered.add(id(parent.node))
                        continue
            if parent is not None and reads:
                up = pending.setdefault(id(parent.node), [])
                up.extend(r[:3] + (r[3] - 1,) for r in sorted(reads, key=lambda r: r[0])[:4] if r[3] > 1)
        yield from sorted(found)

    @staticmethod
    def _candidate(model, loop) -> bool:
        """A loop in XLA code that is no step loop (the caller checks the loops around it),
        cuts no graph (visibly or possibly), draws from nothing that may be a device loader,
        and runs outside a compiled function."""
        ctx = loop.ctx
        if not model.in_xla_code(ctx) or model.is_step_loop(loop):
            return False
        if ctx.func is not None and model._compiled(ctx.func):
            return False
        if model.loop_syncs(loop) or model._unseen_sync_possible(loop):
            return False
        return all(model.loader_kind_through_params(e, ctx) == "plain" or model.iterable_seen(e, ctx)
                   for e in model.loop_iterables(loop))


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_TENSOR_BUILDERS = ("torch.tensor", "torch.as_tensor")


def _spelled_read(model, call, ctx) -> bool:
    """Spelled like a host read (:func:`_may_read`, ``torch.tensor([...])``): the only calls
    XLA508 asks anything more about."""
    if _may_read(model, call, ctx):
        return True
    return bool(call.args) and type(call.args[0]) in (ast.List, ast.Tuple) \
        and model.call_name(call, ctx) in _TENSOR_BUILDERS


class _LoopFacts:
    """What each loop's body binds, from one walk of every outermost loop of the module: per
    loop (its nested loops included) the names bound from their own previous value to a
    device tensor and the names bound any other way; per function, which names are computed
    from which (for the reads of values computed from a carried tensor)."""

    def __init__(self, model):
        self.model = model
        self.by_node = {id(lp.node): lp for lp in model.loops}
        self.own: dict[int, tuple[dict, set]] = {}  # id(loop node) -> (selfref name -> device, fresh names)
        self.edges: dict[int, dict[str, set]] = {}  # id(function or None) -> name -> names computed from it
        self._agg: dict[int, tuple[dict, set]] = {}
        self._taint: dict = {}
        for lp in model.loops:
            if not lp.ctx.loops:
                self._walk(lp)

    def _walk(self, outer):
        edges = self.edges.setdefault(id(outer.ctx.func), {})
        todo = [(outer.node, outer)]
        steps = 0
        while todo and steps < 200000:
            node, loop = todo.pop()
            steps += 1
            t = type(node)
            if t in _NESTED:
                continue
            if t in _LOOPS and node is not loop.node:
                inner = self.by_node.get(id(node))
                if inner is not None:
                    loop = inner
            selfref, fresh = self.own.setdefault(id(loop.node), ({}, set()))
            if t in _LOOPS and node is loop.node and t is not ast.While:
                fresh.update(n.id for n in ast.walk(node.target) if type(n) is ast.Name)
            if t is ast.AugAssign or t in (ast.Assign, ast.AnnAssign) and node.value is not None:
                self._binding(node, loop, selfref, fresh, edges)
            elif t in (ast.With, ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        fresh.update(n.id for n in ast.walk(item.optional_vars) if type(n) is ast.Name)
            elif t is ast.NamedExpr and type(node.target) is ast.Name:
                fresh.add(node.target.id)
            todo.extend((child, loop) for child in ast.iter_child_nodes(node))

    def _binding(self, node, loop, selfref, fresh, edges):
        model = self.model
        ctx = loop.own[0][1] if loop.own else loop.ctx
        value = node.value
        targets = [node.target] if type(node) is not ast.Assign else node.targets
        read_names = {n.id for n in ast.walk(value) if type(n) is ast.Name}
        for target in targets:
            bound = [n.id for n in ast.walk(target) if type(n) is ast.Name]
            for name in read_names:
                edges.setdefault(name, set()).update(bound)
            if type(target) is not ast.Name:
                fresh.update(bound)
                continue
            name = target.id
            if type(node) is ast.AugAssign or name in read_names:
                device = model.tensor_kind(value, ctx) == DEVICE or _device_before(model, loop, name, ctx)
                selfref[name] = selfref.get(name, False) or device
            else:
                fresh.add(name)

    def _aggregate(self, loop) -> tuple[dict, set]:
        key = id(loop.node)
        if key not in self._agg:
            selfref, fresh = self.own.get(key, ({}, set()))
            selfref, fresh = dict(selfref), set(fresh)
            for inner in loop.inner:  # (innermost first: each inner loop is aggregated once)
                s, f = self._aggregate(inner)
                for name, device in s.items():
                    selfref[name] = selfref.get(name, False) or device
                fresh |= f
            self._agg[key] = (selfref, fresh)
        return self._agg[key]

    def carried(self, loop) -> list[str]:
        """Names the loop carries on the device from one iteration to the next (sorted)."""
        selfref, fresh = self._aggregate(loop)
        return sorted(name for name, device in selfref.items() if device and name not in fresh)

    def tainted(self, loop, carried) -> frozenset:
        """``carried`` and the names its function computes from them, through its loops'
        assignments (``logits = model(ids)``, ``tok = logits.argmax(-1)``); memoised."""
        key = (id(loop.ctx.func), tuple(carried))
        if key not in self._taint:
            edges = self.edges.get(id(loop.ctx.func), {})
            out = set(carried)
            todo = list(carried)
            while todo and len(out) < 4096:
                for nxt in edges.get(todo.pop(), ()):
                    if nxt not in out:
                        out.add(nxt)
                        todo.append(nxt)
            self._taint[key] = frozenset(out)
        return self._taint[key]


def _device_before(model, loop, name, ctx) -> bool:
    """The last binding of ``name`` outside the loops of its function before the loop (its
    value when the loop starts) is a device tensor; memoised per function and name (linear
    however many loops rebind it)."""
    key = ("xla508_initial", id(ctx.func), name)
    initial = model._cache.get(key)
    if initial is None:
        bindings = model.lookup(name, ctx, None) or ()
        initial = model._cache[key] = sorted(
            (line, kind == "value" and isinstance(target, ast.AST) and b_ctx is not None and not b_ctx.loops
             and _on_device(model, target, b_ctx))
            for line, kind, target, b_ctx in bindings if b_ctx is None or not b_ctx.loops)
    i = bisect.bisect_left(initial, (loop.node.lineno,))
    return i > 0 and initial[i - 1][1]


def _on_device(model, expr, ctx) -> bool:
    """A device tensor (``tensor_kind``), or ``x.to(device)`` of a receiver the model cannot
    type, where the device is the XLA device (a tensor or a module there: the loop then
    computes with it as a tensor)."""
    if model.tensor_kind(expr, ctx) == DEVICE:
        return True
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "to" and expr.args:
        return model.device_place(expr.args[0], ctx) == "xla"
    return False


def _reads_tainted(call, tainted) -> bool:
    """``x.item()`` / ``.tolist()`` / ``.numpy()`` / ``.cpu()``, ``float(x)`` / ``int(x)`` /
    ``bool(x)`` where ``x`` is computed from a tainted name."""
    f = call.func
    if type(f) is ast.Attribute and f.attr in READ_METHODS and not call.args:
        subject = f.value
    elif type(f) is ast.Name and f.id in _CAST_BUILTINS and len(call.args) == 1:
        subject = call.args[0]
    else:
        return False
    return any(type(v) is ast.Name and v.id in tainted for v in ast.walk(subject))


def _first_read(model, reads, tainted) -> str | None:
    """The text of the first of ``reads`` that reads the device on the host: a device tensor,
    or a value computed from a carried one (``tainted``)."""
    consumed: set[int] = set()
    for _, call, ctx, _ in reads:
        if id(call) in consumed or not model.in_xla_code(ctx):
            continue
        text = _call_read(model, call, ctx, consumed)
        if text is None and _reads_tainted(call, tainted):
            text = _short(call) or "a host read"
        if text is None and model.call_name(call, ctx) in _TENSOR_BUILDERS and call.args \
                and type(call.args[0]) in (ast.List, ast.Tuple) and any(
                    model.tensor_kind(e, ctx) == DEVICE or any(type(v) is ast.Name and v.id in tainted
                                                                for v in ast.walk(e)) for e in call.args[0].elts):
            text = _short(call) or "torch.tensor([tensor])"
        if text is not None:
            return text
    return None

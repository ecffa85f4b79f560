"""XLA5 (timing and replica synchronisation): wall-clock timers that stop before the device
finishes, and ``xm.rendezvous`` calls inside the step or reached by only some replicas."""

from __future__ import annotations

import ast
import bisect

from ..model import UNKNOWN, Ctx
from ..model.scopes import expr_key
from ..model.syncs import DEVICE_COLLECTIVES
from ..model.tensors import DEVICE
from ..registry import Rule, rule
from ._common import at_least

CLOCKS = frozenset({
    "time.time", "time.perf_counter", "time.monotonic", "time.time_ns", "time.perf_counter_ns",
    "time.monotonic_ns", "timeit.default_timer",
})
#: calls that block until the device has run what was queued (or may: a host read)
WAITS = frozenset({
    "torch_xla.core.xla_model.wait_device_ops", "torch_xla.core.xla_model.mesh_reduce",
    "torch_xla.core.xla_model.rendezvous", "torch_xla.core.xla_model.xla_rendezvous",
    "torch_xla.core.xla_model.save", "torch_xla.core.xla_model._maybe_convert_to_cpu",
    "torch_xla._XLAC._xla_wait_device_ops", "torch_xla.utils.serialization.save",
})
#: syncs that dispatch the graph and return at once unless ``wait=True``
WAITABLE_SYNCS = frozenset({"torch_xla.sync", "torch_xla.core.xla_model.mark_step"})
#: tensor methods that copy to the host (and so wait for the device)
HOST_READS = frozenset({"item", "cpu", "tolist", "numpy", "data_ptr", "__array__"})
#: builtins that format or convert a value (a tensor argument is read on the host)
HOST_BUILTINS = frozenset({"print", "float", "int", "bool", "str", "repr", "format"})


def _subtractions(model) -> list:
    """``(BinOp, FunctionInfo or None)`` for every ``a - b`` whose right side is a name and
    whose left side is a name or a call: the candidate ``stop - start`` of a timer.
    Memoised. A timer's start and stop are clock reads of the subtraction's own function,
    so only the functions (or module level) holding a clock read are walked, each without
    the functions nested in it."""
    key = "timing_subs"
    if key in model._cache:
        return model._cache[key]
    funcs = {id(f.node): f for f in model.functions}
    owners = {}
    clocks = set()
    for call, ctx in model.calls_to(*CLOCKS):
        owners[id(ctx.func)] = ctx.func
        clocks.add(id(call))
    out = []
    for func in owners.values():
        scope = func.scope if func is not None else model.module_scope
        if scope is None or (not scope.globals and not any(
                kind == "value" and id(target) in clocks
                for bindings in scope.bindings.values() for _, kind, target, _ in bindings)
                and not _self_clocks(func, clocks)):
            continue  # no timer starts here: nothing assigns a clock read in this scope
        stack = [func.node if func is not None else model.tree]
        while stack:
            node = stack.pop()
            t = type(node)
            if t is ast.BinOp and type(node.op) is ast.Sub and type(node.left) in (ast.Name, ast.Call) \
                    and (type(node.right) is ast.Name or _self_attr(node.right, func)):
                out.append((node, func))
            if t is ast.Lambda:
                continue  # its parameters may shadow the timer's names
            for child in ast.iter_child_nodes(node):
                if id(child) not in funcs:  # a nested function is walked as its own owner
                    stack.append(child)
    model._cache[key] = out
    return out


def _self_attr(expr, func) -> bool:
    """``self.<attr>`` in a method ``func`` (``self`` its first parameter)."""
    return type(expr) is ast.Attribute and type(expr.value) is ast.Name and func is not None \
        and func.cls is not None and bool(func.params) and expr.value.id == func.params[0]


def _self_clocks(func, clocks) -> bool:
    """Some ``self.<attr> = <clock read>`` of the method ``func`` itself."""
    if func is None or func.cls is None:
        return False
    return any(id(v) in clocks and c is not None and c.func is func
               for recs in func.cls.attrs.values() for v, c in recs)


def _call_ctx(model) -> dict:
    """``id(call) -> (call, ctx)`` of the clock reads: a timer's start and stop are such
    calls, any other call is no timer."""
    key = "timing_call_ctx"
    if key not in model._cache:
        model._cache[key] = {id(c): (c, x) for c, x in model.calls_to(*CLOCKS)}
    return model._cache[key]


def _sorted_calls(model, func) -> tuple[list, list]:
    """``func``'s calls (the module level's for None) sorted by position, with their
    positions, indexed once: each timer then looks only at the calls between its reads."""
    key = ("timing_sorted_calls", id(func))
    if key not in model._cache:
        calls = func.calls if func is not None else [(c, x) for c, x in model.calls if x.func is None]
        calls = sorted(calls, key=lambda rec: _pos(rec[0]))
        model._cache[key] = ([_pos(c) for c, _ in calls], calls)
    return model._cache[key]


def _end(node) -> tuple[int, int]:
    return getattr(node, "end_lineno", None) or 0, getattr(node, "end_col_offset", None) or 0


def _pos(node) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


@rule
class TimingWithoutDeviceWait(Rule):
    """## What it does
    Flags a wall-clock timer (`time.time()`, `time.perf_counter()`, `time.monotonic()`, their
    `_ns` forms, `timeit.default_timer()`) whose start and stop reads sit in the same
    function and the same loop iteration, with lazy XLA work between them (a backward pass,
    an optimizer step, `xm.optimizer_step`, a `torch_xla.sync()` / `xm.mark_step()` without
    `wait=True`, a helper that does one of these) and nothing after that work that waits
    for the device before the stop. Reported at the clock read that stops the timer.

    ## Why is this bad?
    XLA records operations lazily and runs the graph asynchronously: the timer measures
    tracing (and dispatch), not execution, so step times and throughput are wrong.

    ## Known problems
    A timer around a whole loop of steps (an epoch that ends in a sync) is not reported: the
    un-waited tail is one step of many. Anything between the work and the stop that may
    wait (`xm.wait_device_ops()`, `torch_xla.sync(wait=True)`, `.item()`, `.cpu()`,
    `print`/`float` of a value, `xm.mesh_reduce`, a call of one of the module's own
    functions or of an imported helper) silences it, and so does eager mode. A stop whose
    start is also read by another stop after a wait measures tracing time on purpose
    (`tracing_end - t0` next to `e2e_end - t0`) and is left alone. A forward pass or a
    loss alone (`out = model(x)`, `F.cross_entropy(out, y)`) is lazy work when its value is
    visibly a device tensor (a model built in the file, or handed to a helper by every
    caller in the module, a value the back-propagated loss is computed from; not a call
    given a CPU tensor), and so is an in-graph collective
    (`xm.all_reduce`, `all_gather`, `reduce_scatter`: run at the next sync), also inside
    `with torch_xla.step():` (the sync at the end of the block does not wait).
    `xm.mesh_reduce` waits: it copies its input to the host (`_xla_sync_multi(...,
    wait=True)` in torch_xla 2.9's `_maybe_convert_to_cpu`). A module helper whose own work is
    followed by a host read (`return loss.item()`) waits. A timer around a whole loop is
    reported only when the loop visibly never cuts the graph (no sync, no device loader,
    nothing unseen that may sync, data that can be seen or a plain `DataLoader`). A timer
    kept on `self` counts when its method stores the start once; a name reused by a second
    timer in the `else` branch is that branch's start. Timers across functions are not
    followed.

    ## Example
    ```python
    for x, y in loader:
        t0 = time.perf_counter()
        loss_fn(model(x), y).backward()
        xm.optimizer_step(optimizer)
        step_time = time.perf_counter() - t0
    ```

    ## Use instead
    ```python
    for x, y in loader:
        t0 = time.perf_counter()
        loss_fn(model(x), y).backward()
        xm.optimizer_step(optimizer)
        torch_xla.sync(wait=True)
        step_time = time.perf_counter() - t0
    ```

    ## References
    - torch_xla `docs/source/learn/trace-vs-execution-time.md` ("compilation and execution
      are deferred"; `torch_xla.sync(wait=True)` "blocks the Python script until the device
      finishes")
    - torch_xla `torch_xla/core/xla_model.py` `wait_device_ops`, `mark_step(wait=...)`;
      `torch_xla/torch_xla.py` `sync(wait=...)` (2.5+)
    - torch_xla `torch_xla/core/xla_model.py` `mesh_reduce` -> `_maybe_convert_to_cpu`
      (`_xla_sync_multi(..., wait=True)`: it waits); `all_reduce` builds an in-graph op
    - Measured on 2.9 (CPU, one replica): `out = model(x)` returns after 0.4 ms of tracing
      and the device work runs at the later `torch_xla.sync(wait=True)`; `xm.all_reduce(...)`
      returns a pending tensor (IR, 0.1 ms); `xm.mesh_reduce` blocks until its input is computed.
    - Applies to torch_xla 2.0-2.9 (`torch_xla.sync(wait=True)` since 2.5, else
      `xm.wait_device_ops()`).
    """

    code = "XLA504"
    name = "timing-without-device-wait"
    message = "timer read before the XLA device finished the work"
    fix = "call torch_xla.sync(wait=True) before it"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the clock read that stops the timer'
    bad = [
        "import time\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def train(loader, model, optimizer, loss_fn):\n"
        "    for x, y in loader:\n"
        "        t0 = time.perf_counter()\n"
        "        loss_fn(model(x), y).backward()\n"
        "        xm.optimizer_step(optimizer)\n"
        "        print(time.perf_counter() - t0)\n",
    ]
    good = [
        "import time\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def train(loader, model, optimizer, loss_fn):\n"
        "    for x, y in loader:\n"
        "        t0 = time.perf_counter()\n"
        "        loss_fn(model(x), y).backward()\n"
        "        xm.optimizer_step(optimizer)\n"
        "        xm.wait_device_ops()\n"
        "        print(time.perf_counter() - t0)\n",
        "import time\nimport torch_xla\n"
        "def train(loader, model, optimizer):\n"
        "    t0 = time.time()\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n        optimizer.step()\n        torch_xla.sync()\n"
        "    return time.time() - t0  # a whole epoch: the tail is one step\n",
    ]

    def check(self, model):
        if not (model.uses_torch_xla or model.in_project()) or not model.calls_to(*CLOCKS) or model.eager_mode():
            return
        fix = self.fix if at_least(self.settings, "2.5") else "call xm.wait_device_ops() before it"
        ctxs = _call_ctx(model)
        timers = {}  # id(start call) -> {id(stop call): (stop call, verdict)}
        for sub, func in _subtractions(model):
            scope = func.scope if func is not None else model.module_scope
            if scope is None:
                continue
            here = Ctx(scope, func, (), ())
            stop = sub.left if type(sub.left) is ast.Call \
                else self._clock_bound(model, sub.left, here, sub.lineno, ctxs)
            if stop is None or id(stop) not in ctxs:
                continue
            # the start that reaches the stop's own branch (`else: t0 = time.time()` reusing a name)
            start = self._clock_bound(model, sub.right, ctxs[id(stop)][1], sub.lineno, ctxs)
            if start is None:
                continue
            (start_call, start_ctx), (stop_call, stop_ctx) = ctxs[id(start)], ctxs[id(stop)]
            if model.call_name(stop_call, stop_ctx) not in CLOCKS:
                continue
            if start_ctx.func is not func or stop_ctx.func is not func \
                    or _pos(start_call) >= _pos(stop_call) or not _same_loops(start_ctx, stop_ctx):
                continue
            if not model.in_xla_code(stop_ctx):
                continue
            verdict = self._region(model, func, start_ctx, _pos(start_call), _pos(stop_call))
            if verdict is not None:
                timers.setdefault(id(start), {})[id(stop)] = (stop_call, verdict)
        for stops in timers.values():
            if any(v == "waited" for _, v in stops.values()):
                continue  # the same start also times the waited run: this stop measures tracing on purpose
            for stop_call, verdict in stops.values():
                yield self.finding(stop_call, fix=fix)

    @staticmethod
    def _clock_bound(model, name, ctx, line, ctxs):
        """The clock call last bound to ``name`` at or before ``line`` in ``ctx``'s scope, or
        the one clock read the method itself stores in ``self.<attr>`` (``name`` that
        attribute) before ``line``."""
        if type(name) is ast.Attribute:
            if ctx.func is None or ctx.func.cls is None:
                return None
            recs = [(v, c) for v, c in ctx.func.cls.attrs.get(name.attr, ()) if c is not None and c.func is ctx.func]
            if len(recs) != 1 or id(recs[0][0]) not in ctxs or recs[0][0].lineno > line:
                return None
            return recs[0][0] if model.call_name(recs[0][0], ctxs[id(recs[0][0])][1]) in CLOCKS else None
        if name.id not in ctx.scope.bindings:
            return None  # not a local of this function: a global or closure timer is not followed
        bindings = model.lookup(name.id, ctx, line)
        if not bindings or len(bindings) != 1:
            return None
        _, kind, target, _ = bindings[0]
        if kind != "value" or type(target) is not ast.Call or id(target) not in ctxs:
            return None
        return target if model.call_name(target, ctxs[id(target)][1]) in CLOCKS else None

    def _region(self, model, func, start_ctx, begin, end) -> str | None:
        """"unwaited": lazy XLA work between ``begin`` and ``end`` at ``func``'s own loop
        level, and no call after the last of it that may wait for the device; "waited":
        work, then a wait; None: no work, or a whole loop of steps."""
        positions, calls = _sorted_calls(model, func)
        depth = len(start_ctx.loops)
        last_work = None
        waits = []
        lo, hi = bisect.bisect_right(positions, begin), bisect.bisect_left(positions, end)
        for call, ctx in calls[lo:hi]:  # only the calls between the clock reads
            pos = _end(call)  # by where each ends: `model(x).cpu()` waits after its forward
            kind = self._kind(model, call, ctx)
            if kind == "loop":
                return None  # a helper that runs a loop of steps: an epoch is timed
            if kind == "work":
                if len(ctx.loops) > depth and not _never_syncs(model, ctx.loops[depth]):
                    return None  # a whole loop of synced steps is timed: the un-waited tail is one step
                if last_work is None or pos > last_work:
                    last_work = pos
            elif kind == "wait" and pos <= end:
                waits.append(pos)  # not one that holds the stop (`print(time.time() - t0)`)
        if last_work is None:
            return None
        return "waited" if any(p > last_work for p in waits) else "unwaited"

    @staticmethod
    def _kind(model, call, ctx) -> str | None:
        """"work" (lazy XLA work queued), "wait" (may block until the device is done), or None."""
        q = model.call_name(call, ctx)
        if q in WAITABLE_SYNCS:
            wait = model.kwarg(call, "wait", 0)
            if wait is None or model.const(wait, ctx) is False:
                return "work"
            return "wait"  # wait=True, or a value that cannot be seen
        if q in WAITS:
            return "wait"
        if _is_work(model, call, ctx) or _traced_work(model, call, ctx):
            return "work"
        if any(type(a) is ast.JoinedStr and len(a.values) > 1 for a in call.args):
            return "wait"  # logger.info(f"{loss}") formats a value
        if q is not None:
            if q in CLOCKS:
                return None
            if q.startswith(("torch_xla.", "torch.")):
                return None  # a torch / torch_xla API that is no host read
            return "wait" if model._imported_helper(call, ctx) else None
        func = call.func
        if type(func) is ast.Attribute and func.attr in HOST_READS:
            return "wait"
        if type(func) is ast.Attribute and func.attr == "to" and call.args:
            return "wait" if model.const(call.args[0], ctx) == "cpu" else None
        if type(func) is ast.Name and func.id in HOST_BUILTINS and model.lookup(func.id, ctx) is None:
            args = list(call.args) + [k.value for k in call.keywords]
            return "wait" if any(type(a) is not ast.Constant for a in args) else None
        targets = model.function_of(func, ctx)
        if targets:
            if any(_loops_work(model, f) for f in targets):
                return "loop"
            if any(_waits(model, f) for f in targets):
                return "wait"  # it waits for the device itself (`xm.wait_device_ops()` at its end)
            if any(model.does_step(f) or model.func_syncs(f) for f in targets):
                return "work"
            return "wait"  # the module's own helper: what it does cannot be told
        return None


def _never_syncs(model, loop) -> bool:
    """The loop (and every loop in it) visibly never cuts the graph: no sync, compiled step
    or syncing helper in it, no device loader, nothing unseen that may sync, and it draws
    only from data that can be seen (``range``, tensors) or a plain ``DataLoader``: timing it
    times only the tracing of all its iterations."""
    if model.loop_syncs(loop) or model.iterates_device_loader(loop) or model._unseen_sync_possible(loop):
        return False
    todo = [loop]
    while todo:
        lp = todo.pop()
        if type(lp.node) in (ast.For, ast.AsyncFor) and not model.loop_iterables(lp):
            return False
        for e in model.loop_iterables(lp):
            if not (model.iterable_seen(e, lp.ctx) or model.loader_kind(e, lp.ctx) == "plain"):
                return False
        todo.extend(lp.inner)
    return True


def _is_work(model, call, ctx) -> bool:
    return model._is_step_marker(call, ctx) or model.is_sync_call(call, ctx)


def _traced_work(model, call, ctx) -> bool:
    """Lazy device work that is no step: a forward pass or a loss computed on the device
    (``model(x)``, ``loss_fn(out, y)``, ``F.cross_entropy(out, y)`` whose value is a device
    tensor; not a tensor's own method such as ``out.mean()``, nor a call given a CPU tensor),
    or an in-graph collective (``xm.all_reduce``: it runs at the next sync)."""
    q = model.call_name(call, ctx)
    f = call.func
    if q is not None:
        if q in DEVICE_COLLECTIVES:
            return True
        if not q.startswith("torch.nn.functional."):
            return False
    elif not (model.is_model(f, ctx) or model.is_loss_fn(f, ctx)) and (
            model.function_of(f, ctx) or type(f) not in (ast.Name, ast.Attribute)
            or type(f) is ast.Attribute and model.tensor_kind(f.value, ctx) == DEVICE):
        return False  # a module function (judged by what it does) or a tensor method
    return model.tensor_kind(call, ctx) == DEVICE and not any(model.cpu_tensor(a, ctx) for a in call.args)


def _work_call(model, call, ctx) -> bool:
    """Lazy work, directly or through a module function that steps or syncs."""
    return _is_work(model, call, ctx) or any(
        model.does_step(f) or model.func_syncs(f) for f in model.function_of(call.func, ctx))


def _loops_work(model, func) -> bool:
    """True when ``func``, or a module function it calls, runs steps or syncs in a loop of
    its own (``train_loop_fn(loader)``: calling it runs a whole epoch). One table, closed
    over callers by the model (linear)."""
    table = model._cache.get("timing_loops_work")
    if table is None:
        direct = {id(f): any(ctx.loops and _work_call(model, call, ctx) for call, ctx in f.calls)
                  for f in model.functions}
        table = model.closure_over_callers("timing_loops_work", direct)
    return table.get(id(func), False)


def _is_wait(model, call, ctx) -> bool:
    q = model.call_name(call, ctx)
    if q in WAITABLE_SYNCS:
        wait = model.kwarg(call, "wait", 0)
        return wait is not None and model.const(wait, ctx) is not False
    return q in WAITS


def _ends_in_read(model, func) -> bool:
    """``func``'s last call that queues work (a step, a sync, a module helper doing either) is
    followed by a host read in its own body (``return loss.item()``, ``.cpu()``): calling it
    waits for the device."""
    last_work = last_read = None
    for call, ctx in func.calls:
        pos = _end(call)
        if _work_call(model, call, ctx):
            last_work = pos if last_work is None or pos > last_work else last_work
        elif type(call.func) is ast.Attribute and call.func.attr in HOST_READS and not call.args \
                and type(call.func.value) is not ast.Constant:
            last_read = pos if last_read is None or pos > last_read else last_read
    return last_work is not None and last_read is not None and last_read > last_work


def _waits(model, func) -> bool:
    """True when ``func``, or a module function it calls, waits for the device (also by a
    host read after its own work: :func:`_ends_in_read`)."""
    table = model._cache.get("timing_waits")
    if table is None:
        direct = {id(f): any(_is_wait(model, call, ctx) for call, ctx in f.calls) or _ends_in_read(model, f)
                  for f in model.functions}
        table = model.closure_over_callers("timing_waits", direct)
    return table.get(id(func), False)


def _same_loops(a: Ctx, b: Ctx) -> bool:
    return len(a.loops) == len(b.loops) and all(x is y for x, y in zip(a.loops, b.loops))


RENDEZVOUS = ("torch_xla.core.xla_model.rendezvous", "torch_xla.core.xla_model.xla_rendezvous")


@rule
class RendezvousMisuse(Rule):
    """## What it does
    Flags `xm.rendezvous(...)` (and `xm.xla_rendezvous`) in XLA code when it runs every
    step (directly in the innermost loop that runs the backward pass or the optimizer
    step), or when it sits under a branch only some replicas take: a test of the rank
    (`xr.global_ordinal() == 0`, `xm.get_ordinal() != 0`, `dist.get_rank() == 0`,
    `RANK` / `LOCAL_RANK` from the environment, `index == 0` for the launched function's
    index, also where a helper receives it, `rank % 8 == 0`), `xm.is_master_ordinal()`, a
    condition on the replica's own data (`if acc > best:` with `acc` from its shard,
    `if not torch.isfinite(loss): return`), or the code after `if not
    xm.is_master_ordinal(): return`. Reported at the `xm.rendezvous` call.

    ## Why is this bad?
    Every replica must reach a rendezvous: one only the master calls waits forever for the
    others (a hang). In the step it syncs the graph before and after the exchange every
    iteration, which cuts the step and may force extra compilations.

    ## Known problems
    The paired pattern (`if not master: xm.rendezvous(tag)` ... `if master:
    xm.rendezvous(tag)`) is fine: a rendezvous under a rank test is not reported when
    another `xm.rendezvous` of the same function with the same tag (or a tag that cannot be
    seen) runs outside that test. A rendezvous in a helper called only under a rank test or
    once per step, with `replicas=` given, or in a single-process launch is not reported,
    nor one under a value every replica agrees on (`xm.mesh_reduce`, `all_reduce`, the world
    size, a config flag). After the step loop (once per epoch) it is fine, and so is one under a
    step gate in the loop (`if step % save_steps == 0:`, a checkpoint every N steps that
    every replica reaches: transformers 3.0's Trainer meets there before `xm.save`).

    ## Example
    ```python
    for step, (x, y) in enumerate(loader):
        loss_fn(model(x), y).backward()
        xm.optimizer_step(optimizer)
        xm.rendezvous("step")
    if xr.global_ordinal() == 0:
        xm.rendezvous("save")
    ```

    ## Use instead
    ```python
    for step, (x, y) in enumerate(loader):
        loss_fn(model(x), y).backward()
        xm.optimizer_step(optimizer)
    xm.rendezvous("epoch_end")  # once per epoch, on every replica
    ```

    ## References
    - torch_xla `docs/source/learn/_pjrt.md` "Changes to xm.rendezvous" (`torch_xla.sync()`
      "is called both before and after the data is transferred"; "Calling `xm.rendezvous`
      in the middle of model code may force an unwanted compilation"; all workers must
      participate)
    - torch_xla `torch_xla/core/xla_model.py` `rendezvous`, `is_master_ordinal`
    - Applies to torch_xla 2.0-2.9 (PJRT).
    """

    code = "XLA506"
    name = "rendezvous-misuse"
    message = "xm.rendezvous reached only by some replicas hangs"
    fix = "call it on every replica, outside the rank test"
    severity = "E"
    versions = "2.0+"
    reported_at = 'the `xm.rendezvous(...)` call'
    bad = [
        "import torch_xla.core.xla_model as xm\n"
        "def save(model):\n"
        "    if xm.is_master_ordinal():\n"
        "        xm.rendezvous('save')\n",
        "import torch_xla.core.xla_model as xm\n"
        "def train(loader, model, optimizer):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(optimizer)\n"
        "        xm.rendezvous('step')\n",
    ]
    good = [
        "import torch_xla.core.xla_model as xm\n"
        "def train(loader, model, optimizer, epochs):\n"
        "    for epoch in range(epochs):\n"
        "        for x in loader:\n"
        "            model(x).sum().backward()\n"
        "            xm.optimizer_step(optimizer)\n"
        "        xm.rendezvous('epoch')\n",
        "import torch_xla.core.xla_model as xm\n"
        "def download():\n"
        "    if not xm.is_master_ordinal():\n"
        "        xm.rendezvous('download')\n"
        "    fetch()\n"
        "    if xm.is_master_ordinal():\n"
        "        xm.rendezvous('download')\n",
    ]

    def check(self, model):
        calls = model.calls_to(*RENDEZVOUS)
        if not calls:
            return
        launches = model.launches()
        single = bool(launches) and all(one for _, _, _, one in launches)
        ranked = {}
        for call, ctx in calls:
            if model.in_xla_code(ctx):
                ranked[id(call)] = _rank_frames(model, ctx)
        for call, ctx in calls:
            if id(call) not in ranked:
                continue
            if _in_step(model, ctx) and not _step_gated(model, ctx):
                yield self.finding(call, "xm.rendezvous in the step loop syncs every step",
                                   "move it after the loop, on every replica")
                continue
            frames = ranked[id(call)]
            if not frames or single:
                continue
            replicas = model.kwarg(call, "replicas", 2) if model.call_name(call, ctx) == RENDEZVOUS[0] else None
            if replicas is UNKNOWN or (replicas is not None and not (type(replicas) is ast.List and not replicas.elts)):
                continue  # a subset named on purpose
            tag = _tag(model, call, ctx)
            if any(other is not call and octx.func is ctx.func and ranked.get(id(other)) != frames
                   and _same_tag(tag, _tag(model, other, octx)) for other, octx in calls if id(other) in ranked):
                continue  # the paired pattern: the other replicas meet it elsewhere
            yield self.finding(call)


def _tag(model, call, ctx):
    q = model.call_name(call, ctx)
    arg = model.kwarg(call, "tag", 0 if q == RENDEZVOUS[0] else 2)
    if arg is None:
        return None
    value = model.const(arg, ctx) if arg is not UNKNOWN else UNKNOWN
    return value if isinstance(value, str) else UNKNOWN


def _same_tag(a, b) -> bool:
    return a is UNKNOWN or b is UNKNOWN or a == b


def _rank_frames(model, ctx) -> frozenset:
    """The ``(test, polarity)`` branch frames around ``ctx`` (inside its function) that
    only some replicas take (``model.replica_guards``: a rank test, the master ordinal, a
    value from the replica's own data), ``not`` folded in."""
    out = set()
    for test, polarity, _ in model.replica_guards(ctx):
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, polarity = test.operand, not polarity
        out.add((expr_key(test), polarity))  # `if not master:` is the other arm of `if master:`
    return frozenset(out)


def _step_gated(model, ctx) -> bool:
    """Under ``if step % N == 0:`` (a checkpoint every N steps, the same on every replica):
    not every step (transformers 3.0's Trainer meets there before ``xm.save``)."""
    return any(type(frame) is tuple and frame[1] and model._is_gate(frame[0], ctx) for frame in ctx.frames or ())


def _in_step(model, ctx) -> bool:
    """Directly in a loop that runs one training step per iteration (its backward pass or
    optimizer step is not inside a nested loop or a helper that loops)."""
    return any(_direct_step_loop(model, loop) for loop in ctx.loops)


def _direct_step_loop(model, loop) -> bool:
    key = ("timing_direct_step", id(loop))
    if key not in model._cache:
        result = False
        if model.is_step_loop(loop):
            for call, ctx in loop.calls:
                if not ctx.loops or ctx.loops[-1] is not loop:
                    continue
                if model._is_step_marker(call, ctx):
                    if model.project_lookup is not None and model._helper_call(call, ctx) \
                            and not model.callee_agree(call, ctx, "steps_once"):
                        continue  # train_one_epoch(...) of another module: it loops over the steps itself
                    result = True
                    break
                targets = model.function_of(call.func, ctx)
                if targets and any(model.does_step(f) for f in targets) \
                        and not any(_loops_work(model, f) for f in targets):
                    result = True
                    break
        model._cache[key] = result
    return model._cache[key]

"""XLA2: gradient reduction and the optimizer step; XLA3: data loading and step sync."""

from __future__ import annotations

import ast
import dataclasses

from ..model import UNKNOWN
from ..model.reductions import OPTIMIZER_STEP, reduces_gradients
from ..model.replicas import single_replica_branch
from ..model.scopes import _expr_key, expr_key
from ..registry import Rule, rule
from ._common import at_least, render


@rule
class UnreducedOptimizerStep(Rule):
    """## What it does
    Flags `optimizer.step()` (any receiver holding a torch optimizer) in a step loop of
    code started by a multi-process XLA launcher, or in a helper such a loop calls, when
    nothing in the module reduces gradients across replicas.

    ## Why is this bad?
    In native XLA data parallel each replica computes gradients on its own shard; nothing
    averages them unless `xm.optimizer_step` (all-reduce, then step) or a wrapper does.
    Every replica silently trains its own model; no error is raised.

    ## Known problems
    Not reported when XLA code uses DDP, XLA FSDP, FSDPv2, ZeRO-1 or torch FSDP (a leftover
    import, or DDP only in a CUDA branch, reduces nothing and does not count), when the
    module uses SPMD or a training framework (Accelerate, Lightning, HF Trainer), or
    re-binds its model from a helper imported from another module (`model = wrap(model)`
    may wrap it: unknown), or steps an optimizer that a call taking it gave back (`model,
    optimizer = accelerator.prepare(model, optimizer)`: the wrapper's `step` may reduce); when `xm.reduce_gradients`, `xm.optimizer_step` or an
    all-reduce of gradients runs earlier in the same loop body (a module helper doing it
    counts); for a step in the other branch of an `if` that reduces (`if use_xla:
    xm.optimizer_step(opt) else: opt.step()`), or in the single-replica branch of `if
    xr.world_size() > 1:` (`xm.xrt_world_size()`, a name bound from them); without a
    launcher (single device); with `nprocs=1` or `debug_single_process=True`. What an
    all-reduce reduces decides, never a variable's name: `p.grad`, a list of them or a
    tensor built from them counts (and what cannot be seen), a loss or a grad norm reduced
    for logging does not. A second step after `xm.optimizer_step` is XLA207.
    `xm.optimizer_step(opt_d)` / `xm.reduce_gradients(opt_d)` cover only `opt_d`'s
    parameters: a GAN's `opt_g.step()` after it is reported when the two optimizers are
    visibly built over different parameters, or neither construction is seen; one built
    over the same parameters, or an alias, counts as covered.

    ## Example
    ```python
    loss.backward()
    optimizer.step()
    ```

    ## Use instead
    ```python
    loss.backward()
    xm.optimizer_step(optimizer)      # all-reduce(mean) of the gradients, then step
    ```
    or reduce first when you must touch the reduced gradients:
    `xm.reduce_gradients(optimizer); clip_grad_norm_(...); optimizer.step()`.

    ## References
    - torch_xla `README.md` multi-processing diff (`+ xm.optimizer_step(optimizer)` "combines gradients across replicas")
    - torch_xla `torch_xla/core/xla_model.py` `optimizer_step` -> `reduce_gradients`
    - torch_xla `docs/source/perf/fsdp_collectives.md` (FSDP calls `optimizer.step()` directly)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA201"
    name = "unreduced-optimizer-step"
    message = "optimizer.step() without a gradient all-reduce across replicas"
    fix = "use xm.optimizer_step(optimizer) or DDP"
    severity = "E"
    versions = "2.0+"
    reported_at = 'the `optimizer.step()` call'
    fix_applicability = "unsafe"
    bad = [
        "import torch_xla\n"
        "def f(i, loader, model, optimizer):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "torch_xla.launch(f, args=(None, None, None))\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "def f(i, loader, model, optimizer):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.reduce_gradients(optimizer)\n"
        "        optimizer.step()\n"
        "torch_xla.launch(f, args=(None, None, None))\n",
        "import torch_xla\n"
        "def f(i, loader, model, optimizer):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
        "torch_xla.launch(f, args=(None, None, None), debug_single_process=True)\n",
    ]

    def check(self, model):
        if not model.may_step() or not model.launched(multi_only=True) or model.reduces_gradients_elsewhere():
            return  # nothing steps, nothing launched on several replicas, or something reduces the gradients
        seen = set()
        helpers_done: set[int] = set()  # a helper's findings do not depend on the loop that reaches it
        position = {id(f): i for i, f in enumerate(model.functions)}
        for loop in model.loops:
            ctx = loop.ctx
            if not (model.is_step_loop(loop) and model.is_launched(ctx, multi_only=True) and model.in_xla_code(ctx)):
                continue
            reductions = [(c, x) for c, x in loop.calls if reduces_gradients(model, c, x)]
            for call, cctx in loop.calls:
                if cctx.loops[-1] is loop and self._unreduced(model, call, cctx, reductions):
                    seen.add(id(call))
                    yield self.finding(call)
            if reductions:
                continue
            # a helper called from the loop body steps once per iteration too
            roots = [f for call, cctx in loop.calls for f in model.function_of(call.func, cctx)]
            new = (model.reachable(roots) - helpers_done) & position.keys()
            helpers_done |= new
            for fid in sorted(new, key=position.__getitem__):  # each helper once, in module order
                func = model.functions[position[fid]]
                helper_reductions = [(c, x) for c, x in func.calls if reduces_gradients(model, c, x)]
                for call, cctx in func.calls:
                    if not cctx.loops and id(call) not in seen and self._unreduced(model, call, cctx, helper_reductions):
                        seen.add(id(call))
                        yield self.finding(call)
        if model.project_callers is None:
            return
        for func in model.functions:  # a helper another module's step loop calls (project mode)
            if id(func) in helpers_done or func.cls is not None or not model.project_step_calls(func):
                continue
            helper_reductions = [(c, x) for c, x in func.calls if reduces_gradients(model, c, x)]
            for call, cctx in func.calls:
                if cctx.func is func and not cctx.loops and id(call) not in seen \
                        and model.is_launched(cctx, multi_only=True) \
                        and self._unreduced(model, call, cctx, helper_reductions):
                    seen.add(id(call))
                    yield self.finding(call)

    @staticmethod
    def _unreduced(model, call, ctx, reductions) -> bool:
        return (model.is_optimizer_step(call, ctx) and model.in_xla_code(ctx)
                and not model.rebuilt(call.func.value, ctx)  # (an unseen wrapper's step may reduce)
                and not model.project_result(call.func.value, ctx)  # (so may one another module returns)
                and not any(r.lineno <= call.lineno and _covers_optimizer(model, r, rctx, call, ctx)
                            for r, rctx in reductions)
                and not _overridden(model, ctx.func)
                and not single_replica_branch(model, ctx)
                and not _alternative_to_reduction(model, call, ctx))


@rule
class DoubleOptimizerStep(Rule):
    """## What it does
    Flags `optimizer.step()` on a path where `xm.optimizer_step(optimizer)` also runs in
    the same iteration (the same optimizer: the same name or `self.` attribute), in XLA
    code. `if cond: xm.optimizer_step(opt)` followed by an unconditional `opt.step()` is
    such a path.

    ## Why is this bad?
    `xm.optimizer_step(optimizer)` all-reduces the gradients and then calls
    `optimizer.step()` itself. A second `optimizer.step()` in the same iteration applies
    the update twice (with momentum or Adam state advanced twice); training diverges or
    silently runs at twice the learning rate, and no error is raised. Advice to "call
    `xm.optimizer_step`" (XLA201) would be wrong here: the fix is to drop the extra call.

    ## Known problems
    Not reported when the two calls are alternatives (`if use_xla: xm.optimizer_step(opt)
    else: opt.step()`, `if t: ...; continue`, different `case` arms, a `try` body and its
    handler), when they sit under two unrelated conditions (whether both can hold is
    unknown), or when the second step is in a helper function. `self.opt.step()` in a loop
    whose iteration also calls `self.update()`, a method of the class that calls
    `xm.optimizer_step(self.opt)` unconditionally, is reported. A second step in a hook
    the loop calls on `self` is reported when a class built in the module overrides the
    hook with an unconditional `self.optimizer.step()` (a mixin of a trainer whose base
    class runs the loop).

    ## Example
    ```python
    loss.backward()
    if on_tpu:
        xm.optimizer_step(opt)
    opt.step()
    ```

    ## Use instead
    ```python
    loss.backward()
    if on_tpu:
        xm.optimizer_step(opt)
    else:
        opt.step()
    ```

    ## References
    - torch_xla `torch_xla/core/xla_model.py` `optimizer_step`: calls `reduce_gradients(optimizer, ...)`,
      then `optimizer.step(**optimizer_args)`, then `torch_xla.sync()` when `barrier=True`
    - torch_xla `README.md` multi-processing diff (`- optimizer.step()` / `+ xm.optimizer_step(optimizer)`: a replacement)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA207"
    name = "double-optimizer-step"
    message = "opt.step() after xm.optimizer_step(opt) applies the update twice"
    fix = "drop opt.step()"
    severity = "E"
    versions = "2.0+"
    reported_at = 'the extra `optimizer.step()` call'
    supersedes = ("XLA201",)
    bad = [
        "import torch_xla.core.xla_model as xm\n"
        "def f(loader, model, opt, on_tpu):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        if on_tpu:\n"
        "            xm.optimizer_step(opt)\n"
        "        opt.step()\n",
    ]
    good = [
        "import torch_xla.core.xla_model as xm\n"
        "def f(loader, model, opt, on_tpu):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        if on_tpu:\n"
        "            xm.optimizer_step(opt)\n"
        "        else:\n"
        "            opt.step()\n",
    ]

    def check(self, model):
        updates = model.calls_to(OPTIMIZER_STEP)
        if not updates:
            yield from self._override_steps(model)
            return
        groups: dict[tuple, list] = {}
        for call, ctx in model.method_calls("step"):
            key = (id(ctx.func), id(ctx.loops[-1]) if ctx.loops else None, expr_key(call.func.value))
            groups.setdefault(key, []).append((call, ctx))
        reported = set()
        for call, ctx in updates:
            opt = model.kwarg(call, "optimizer", 0)
            if not isinstance(opt, ast.AST) or not model.in_xla_code(ctx):
                continue
            steps = groups.get((id(ctx.func), id(ctx.loops[-1]) if ctx.loops else None, expr_key(opt)), ())
            if len(steps) > 32:
                continue  # generated code: bounded work per optimizer step, silent
            for step, sctx in steps:
                if id(step) in reported or not _same_ref(model, step.func.value, sctx, opt, ctx):
                    continue
                if model.in_xla_code(sctx) and model.runs_with((call, ctx), (step, sctx)):
                    reported.add(id(step))
                    name = render(step.func.value)
                    order = "after" if (step.lineno, step.col_offset) > (call.lineno, call.col_offset) else "before"
                    yield self.finding(
                        step, f"{name}.step() {order} xm.optimizer_step({render(opt)}) applies the update twice",
                        f"drop {name}.step()")
            for step, sctx, hook in _hook_steps(model, call, ctx, opt, groups):
                if id(step) not in reported:
                    reported.add(id(step))
                    name = render(step.func.value)
                    yield self.finding(
                        step, f"{name}.step() in hook {hook.func.attr}() and xm.optimizer_step({render(opt)}) "
                              "apply the update twice", f"drop {name}.step()")
        for step, sctx, hook in _own_method_updates(model, updates):
            if id(step) not in reported:
                reported.add(id(step))
                name = render(step.func.value)
                yield self.finding(
                    step, f"{name}.step() and xm.optimizer_step in {hook.func.attr}() apply the update twice",
                    f"drop {name}.step()")


    def _override_steps(self, model):
        """Project mode: ``self.opt.step()`` in a loop of a reached method whose iteration
        also calls ``self.hook()``, where every object the method runs on runs an override
        of another module that calls ``xm.optimizer_step(self.opt)`` (a base trainer's loop
        and a TPU subclass's ``training_step``: :meth:`Model._remote_override`)."""
        if not model.project_dispatch:
            return
        for step, sctx in model.method_calls("step"):
            opt, func = step.func.value, sctx.func
            if type(opt) is not ast.Attribute or type(opt.value) is not ast.Name or not sctx.loops \
                    or func is None or func.cls is None or not func.params or opt.value.id != func.params[0] \
                    or step.args or step.keywords or not model.in_xla_code(sctx):
                continue
            own = sctx.loops[-1].own
            if len(own) > 64:
                continue  # generated code: bounded work per optimizer step, silent
            for hook, hctx in own:
                helpers = model.remote_overrides(hook.func, hctx) if hook is not step else None
                if helpers and all(opt.attr in h.self_steps for h in helpers) \
                        and model.runs_with((hook, hctx), (step, sctx)):
                    name = render(opt)
                    where = helpers[0].module if len(helpers) == 1 else "its overrides"
                    yield self.finding(
                        step, f"{name}.step() and xm.optimizer_step in {hook.func.attr}() ({where}) "
                              "apply the update twice", f"drop {name}.step()")
                    break


def _own_method_updates(model, updates):
    """``(step, ctx, call)`` for a ``self.opt.step()`` in a loop whose same iteration runs
    ``self.m()``, where ``m`` (a method of the object's own class, by name resolution)
    calls ``xm.optimizer_step(self.opt)`` unconditionally at its top level."""
    table: dict[int, set] = {}  # id(method) -> expr keys of the optimizers it steps with xm
    for call, ctx in updates:
        func = ctx.func
        opt = model.kwarg(call, "optimizer", 0)
        if func is None or func.cls is None or not func.params or ctx.loops or ctx.frames \
                or type(opt) is not ast.Attribute or not model.in_xla_code(ctx):
            continue
        root = opt
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is ast.Name and root.id == func.params[0]:
            table.setdefault(id(func), set()).add(expr_key(opt))
    if not table:
        return
    for step, sctx in model.method_calls("step"):
        recv, func = step.func.value, sctx.func
        if type(recv) is not ast.Attribute or not sctx.loops or func is None or func.cls is None \
                or not func.params or step.args or step.keywords or not model.in_xla_code(sctx):
            continue
        root = recv
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is not ast.Name or root.id != func.params[0]:
            continue
        own = sctx.loops[-1].own
        if len(own) > 64:
            continue  # generated code: bounded work per optimizer step, silent
        key = expr_key(recv)
        for hook, hctx in own:
            f = hook.func
            if hook is step or type(f) is not ast.Attribute or type(f.value) is not ast.Name \
                    or f.value.id != func.params[0]:
                continue
            targets = model.function_of(f, hctx)
            if targets and all(key in table.get(id(t), ()) for t in targets) \
                    and model.runs_with((hook, hctx), (step, sctx)):
                yield step, sctx, hook
                break


def _hook_steps(model, call, ctx, opt, groups):
    """``(step, ctx, hook call)`` for an unconditional ``self.opt.step()`` in a method that a
    ``self.hook()`` call of the same iteration as ``xm.optimizer_step(self.opt)`` runs on an
    instance of a subclass built in the module (a mixin's or a subclass's override:
    :meth:`~flake8_xla.model.attributes.Attributes.hook_methods`)."""
    func = ctx.func
    root = opt
    while type(root) is ast.Attribute:
        root = root.value
    if not ctx.loops or func is None or func.cls is None or type(opt) is not ast.Attribute \
            or type(root) is not ast.Name or not func.params or root.id != func.params[0]:
        return
    loop = ctx.loops[-1]
    key = ("hook_calls", id(loop))
    hooks = model._cache.get(key)
    if hooks is None:  # once per loop: the self.m() calls of its iteration that run an override
        hooks = model._cache[key] = [
            (hook, hctx, methods) for hook, hctx in loop.own
            if type(hook.func) is ast.Attribute
            for methods in (model.hook_methods(hook, hctx),) if methods]
    if len(hooks) > 32:
        return  # generated code: bounded work per optimizer step, silent
    for hook, hctx, methods in hooks:
        if not model.runs_with((call, ctx), (hook, hctx)):
            continue
        for m in methods:
            if not m.params or m.params[0] != root.id:
                continue
            for step, sctx in groups.get((id(m), None, expr_key(opt)), ()):
                if not sctx.frames and model.in_xla_code(sctx):
                    yield step, sctx, hook


def _same_ref(model, a, actx, b, bctx) -> bool:
    """The same optimizer: one name bound the same way at both places, or one ``self.``
    attribute chain (a name rebound between them is another object)."""
    if expr_key(a) != expr_key(b) or type(a) not in (ast.Name, ast.Attribute):
        return False
    root_a, root_b = a, b
    while type(root_a) is ast.Attribute:
        root_a, root_b = root_a.value, root_b.value
    if type(root_a) is not ast.Name:
        return False
    la = model.lookup(root_a.id, actx, getattr(root_a, "lineno", None))
    lb = model.lookup(root_b.id, bctx, getattr(root_b, "lineno", None))
    return la is not None and la == lb


def _alternative_to_reduction(model, call, ctx) -> bool:
    """``opt.step()`` in one branch of an ``if`` whose other branch reduces
    (``if use_xla: xm.optimizer_step(opt) else: opt.step()``): a deliberate alternative
    path (DDP, single device), not a missed reduction."""
    key = ("reducing_calls", id(ctx.func))
    reducing = model._cache.get(key)
    if reducing is None:
        siblings = ctx.func.calls if ctx.func is not None else [(c, x) for c, x in model.calls if x.func is None]
        reducing = model._cache[key] = [(c, x) for c, x in siblings if reduces_gradients(model, c, x)]
    return any(other is not call and model.exclusive((call, ctx), (other, octx)) for other, octx in reducing)


def _covers_optimizer(model, reduction, rctx, step, sctx) -> bool:
    """Whether an earlier reduction covers ``step``'s optimizer. ``xm.optimizer_step(optD)``
    and ``xm.reduce_gradients(optD)`` reduce only ``optD``'s parameter groups: a GAN's
    ``optG.step()`` after them is still unreduced. Any other reduction (an all-reduce of
    gradients, a helper) and an optimizer that may be the same object (an alias
    ``opt = self.optimizer``, what cannot be told apart) count as covering."""
    if model.call_name(reduction, rctx) not in (OPTIMIZER_STEP, "torch_xla.core.xla_model.reduce_gradients"):
        return True
    reduced = model.kwarg(reduction, "optimizer", 0)
    stepped = step.func.value
    if not isinstance(reduced, ast.AST):
        return True
    return not _distinct_optimizers(model, reduced, rctx, stepped, sctx)


def _distinct_optimizers(model, a, actx, b, bctx) -> bool:
    """``a`` and ``b`` are visibly different optimizers: two different plain names (or
    ``self.`` attributes) neither of which is bound to the other."""
    def key(e):
        if type(e) is ast.Name:
            return ("name", e.id)
        if type(e) is ast.Attribute and type(e.value) is ast.Name:
            return ("attr", e.value.id, e.attr)
        return None

    ka, kb = key(a), key(b)
    if ka is None or kb is None or ka == kb:
        return False
    for e, c, other in ((a, actx, kb), (b, bctx, ka)):
        for value, _ in model.values(e, c) or ():
            if key(value) == other:
                return False  # opt = self.optimizer: the same object
    # over the same parameters (two optimizers of one model), the first reduction already
    # averaged the shared .grad tensors: only visibly different parameters, or two
    # optimizers neither of whose construction is seen (a GAN's optD, optG), are distinct
    sa, sb = _params_source(model, a, actx), _params_source(model, b, bctx)
    return sa != sb if sa is not None and sb is not None else sa is None and sb is None


def _params_source(model, expr, ctx):
    """The structural key of the parameters an optimizer was built over
    (``SGD(netD.parameters())``), or None when its construction cannot be seen."""
    values = model.values(expr, ctx)
    if not values or len(values) != 1 or type(values[0][0]) is not ast.Call:
        return None
    call, cctx = values[0]
    params = model.kwarg(call, "params", 0)
    return _expr_key(params) if isinstance(params, ast.AST) and model.is_optimizer(expr, ctx) else None


def _overridden(model, func) -> bool:
    """A method that a subclass in the module overrides: which one runs is not known here
    (``TrainBase.run_optimizer`` vs ``TrainXlaDP.run_optimizer`` calling xm.optimizer_step)."""
    if func is None or func.cls is None:
        return False
    key = ("overridden", func.name)
    below = model._cache.get(key)
    if below is None:  # the classes some other class defining the name subclasses, once per name
        below = model._cache[key] = set()
        for cls in model.classes:
            if func.name in cls.methods:
                below.update(model.mro(cls)[1:])  # (in C: a chain of N overrides costs N steps)
    return func.cls in below


@rule
class LoaderWithoutMpDeviceLoader(Rule):
    """## What it does
    Flags a `torch.utils.data.DataLoader` that a training step loop in XLA code draws its
    batches from: constructed inline, bound to a name or `self.` attribute, returned by a
    module helper or method (`make_loader(ds)`, `self.train_dataloader()`, `loader, sampler
    = make()`), through `enumerate` / `zip` / `itertools.islice` / `tqdm`, or advanced with
    `next(it)` after `it = iter(loader)` (`for step in range(n):`, `while (b := next(it,
    None)) is not None:`); reported at the loop header. A loader passed to a module function
    whose step loop iterates that parameter is reported where it is passed (`fit(model,
    loader)`), since the fix goes there.

    ## Why is this bad?
    `pl.MpDeviceLoader` preloads batches to the device, overlapping host-to-device
    transfers with execution, and cuts the graph (`torch_xla.sync()`) after every batch.
    A plain DataLoader transfers synchronously; and when nothing else syncs per step
    (`xm.optimizer_step` syncs only with `barrier=True`) the lazy graph grows with every
    iteration until it is compiled as one huge graph or runs out of memory.

    ## Known problems
    Not reported for loops that do no backward pass or optimizer step (evaluation), for
    loaders wrapped anywhere on the way (`pl.MpDeviceLoader`,
    `ParallelLoader(...).per_device_loader`, also inside the helper or the callee), for a
    parameter or helper result that cannot be seen, nor for loops that sync every step
    (`with torch_xla.step():`, `torch_xla.sync()`, `xm.mark_step()`,
    `xm.optimizer_step(..., barrier=True)`, a `torch_xla.compile`d step), directly or in a
    helper the loop calls (in project mode a plain loader handed to another module's function
    or class whose loop has no sync is reported at the argument) (followed 32 levels; also the `__exit__` of a `with` item's class,
    a decorator's wrapper, a base method `super()` reaches, in the module or another
    project module), or in the loop of a generator of the module
    the loop draws from (`yield b.to(dev); torch_xla.sync()`: one sync per item): the torch_xla README (2.5-2.9) itself
    iterates a plain DataLoader that way; the loader then only misses prefetching. Nor in
    a module that turns on eager mode (`torch_xla.experimental.eager_mode(True)`, 2.4+):
    there no graph grows. A sync under a step gate of the loop (`if step % 10 == 0:
    xm.mark_step()`) is no per-step sync: the loop is reported.

    ## Example
    ```python
    for data, target in train_loader:
        ...
        xm.optimizer_step(optimizer)
    ```

    ## Use instead
    ```python
    import torch_xla.distributed.parallel_loader as pl

    mp_loader = pl.MpDeviceLoader(train_loader, device)
    for data, target in mp_loader:
        ...
        xm.optimizer_step(optimizer)
    ```

    ## References
    - torch_xla `docs/source/learn/pytorch-on-xla-devices.md` (`MpDeviceLoader` "can preload the data to the device")
    - torch_xla `torch_xla/distributed/parallel_loader.py` (`MpDeviceLoader`, `PerDeviceLoader.next` syncs)
    - torch_xla `docs/source/learn/xla-advanced.md` "Data Loading" (`barrier=True` without MpDeviceLoader)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA301"
    fix_applicability = "unsafe"
    name = "loader-without-mpdeviceloader"
    message = "DataLoader loop without a per-step sync: the XLA graph grows"
    fix = "use pl.MpDeviceLoader(loader, device)"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the header of the loop (`for x in loader:`); for a loader passed to a function whose loop trains on it, that argument of the call'
    bad = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nfrom torch.utils.data import DataLoader\n"
        "def f(ds, model, opt):\n"
        "    loader = DataLoader(ds, batch_size=8)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\n"
        "from torch.utils.data import DataLoader\n"
        "def f(ds, model, opt, dev):\n"
        "    loader = pl.MpDeviceLoader(DataLoader(ds, batch_size=8), dev)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n"
        "    for x in DataLoader(ds):\n"
        "        model(x)\n",
    ]

    def check(self, model):
        if model.eager_mode():
            return  # every op runs at once: no lazy graph grows
        params = model.loader_params()
        for loop, kind in model.unsynced_loader_loops():
            if kind != "plain":
                continue
            node = loop.node
            if type(node) in (ast.For, ast.AsyncFor) and model.loader_kind(node.iter, loop.ctx) == "plain":
                yield self.finding(node, fix=self._wrap(model, node, loop.ctx))
            else:  # it = iter(loader); for _ in range(n): next(it)
                yield self.finding(node, "DataLoader read by next() without a per-step sync: the XLA graph grows")
        yield from self._handed_to_project(model)
        if not params:
            return
        seen = set()
        by_func: dict[int, list[str]] = {}  # id(function) -> its parameters in params, in order
        for fid, name in params:
            by_func.setdefault(fid, []).append(name)
        for func in model.functions:
            names = by_func.get(id(func))
            if not names:
                continue
            for call, ctx in model.calls_of(func):
                if not model.in_xla_code(ctx):
                    continue
                for name in names:
                    arg = model.argument_for(call, ctx, func, name)
                    if isinstance(arg, ast.AST) and id(arg) not in seen and model.loader_kind(arg, ctx) == "plain":
                        seen.add(id(arg))
                        line = params[(id(func), name)].node.lineno
                        callee = func.cls.name if func.name == "__init__" and func.cls is not None else func.name
                        yield self.finding(
                            arg, f"plain DataLoader passed to {callee}(), whose loop (line {line}) has no per-step sync",
                            f"pass pl.MpDeviceLoader({render(arg)}, device)",
                        )

    def _handed_to_project(self, model):
        """Project mode: a plain ``DataLoader`` handed to another module's function or class
        whose step loop iterates that parameter with no per-step sync
        (``HelperFacts.unsynced_params``: ``BaseTrainer(model, loader, opt)`` whose ``train``
        loops over ``self.loader``), reported at the argument."""
        if model.project_lookup is None or not model.calls_named((model.DATALOADER,)):
            return
        for call, ctx in model.calls:
            if not call.args or not model.in_xla_code(ctx) or type(call.func) not in (ast.Name, ast.Attribute) \
                    or (model.call_name(call, ctx) or "").startswith(("torch.", "torch_xla.")):
                continue
            plain = [(i, a) for i, a in enumerate(call.args) if type(a) is not ast.Starred
                     and model.loader_kind(a, ctx) == "plain"]
            if not plain or any(type(a) is ast.Starred for a in call.args[:plain[-1][0]]):
                continue
            helpers = model.callee_helpers(call, ctx)
            if not helpers or any(not h.unsynced_params for h in helpers):
                continue
            shift = [1 if "." in h.qual else 0 for h in helpers]  # (a method's indexes count self)
            for i, a in plain:
                if all(i + k in h.unsynced_params for h, k in zip(helpers, shift)):
                    callee = helpers[0].qual.rsplit(".", 1)[-1] if "." in helpers[0].qual else helpers[0].qual
                    where = helpers[0].module.rsplit("/", 1)[-1]
                    yield self.finding(a, f"plain DataLoader passed to {callee[:24]}() ({where[:24]}), whose loop"
                                          " has no per-step sync", f"pass pl.MpDeviceLoader({render(a)[:24]}, device)")

    def _wrap(self, model, loop, ctx) -> str:
        """The fix in the code's own names: the loop's loader (inside ``enumerate`` /
        ``tqdm``; ``...`` for a call; a bar bound to ``tqdm(loader)`` gets the loader inside)
        and the device variable in scope, else the XLA device call."""
        def inner(it):
            while type(it) is ast.Call and it.args and type(it.args[0]) is not ast.Starred \
                    and render(it.func) in _ITER_WRAPPERS:
                it = it.args[0]
            return render(it) if type(it) in (ast.Name, ast.Attribute) else "..."

        device = model.device_name_at(ctx, loop.lineno) or \
            ("torch_xla.device()" if at_least(self.settings, "2.3") else "xm.xla_device()")
        it = loop.iter
        if type(it) is ast.Name:  # bar = tqdm(loader); for x in bar: the loader goes inside the bar
            bindings = model.read_bindings(it, ctx) or ()
            value = bindings[0][2] if len(bindings) == 1 and bindings[0][1] == "value" else None
            if type(value) is ast.Call and render(value.func) in _ITER_WRAPPERS[2:] and value.args:
                return f"use {it.id} = {render(value.func)}(pl.MpDeviceLoader({inner(value.args[0])}, {device}))"
        return f"use pl.MpDeviceLoader({inner(it)}, {device})"


_ITER_WRAPPERS = ("enumerate", "iter", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm")


@rule
class MissingStepSync(Rule):
    """## What it does
    Flags a training step loop (its body, or a module function it calls, runs a backward
    pass or an optimizer step) in XLA code that never cuts the lazy graph per iteration:
    no `torch_xla.sync()`, `xm.mark_step()`, `xm.optimizer_step(..., barrier=True)`,
    `with torch_xla.step():`, `xp.StepTrace`, `torch_xla.compile`d step (in the body or in
    a helper it calls, or per item in a generator of the module it iterates), and no
    `MpDeviceLoader` to iterate. Reported at the header of the
    innermost loop that runs the step.

    ## Why is this bad?
    PyTorch/XLA records operations lazily and executes them only at a graph cut. Without
    one per step, every iteration appends to the same pending graph: nothing runs on the
    device, the graph grows until it is compiled as one huge graph (minutes to hours, it
    looks like a hang) or the host runs out of memory. `xm.optimizer_step` alone does not
    cut the graph (`barrier=False` by default).

    ## Known problems
    Reported only where every data source of the loop, and of the loops around it in the
    function, can be seen (`range(n)`, literals, tensors, `xu.SampleGenerator`, module
    helpers returning those): a loop over a parameter or an imported helper's result may
    iterate an `MpDeviceLoader` and is not reported, nor a loop that advances with `next()`
    an iterator it cannot see. A plain `DataLoader` is XLA301. Not reported under eager
    mode (`torch_xla.experimental.eager_mode(True)`), with `torch.compile` / dynamo or a
    training framework (Accelerate, Lightning, HF Trainer), for evaluation loops (no
    backward, no optimizer step), for loops that run a backward but no optimizer step,
    in them or around them (a gradient test, accumulation a caller steps), when a loop around it syncs once per step (an inner
    gradient-accumulation loop; also where the loop that steps may sync unseen, as when it
    draws the micro-batches through a helper: `for x, y in get_micro_batches(it, accum):`
    with `next(it)` of an iterator handed in), when the function holding it is called from another
    loop, or when the loop calls a function imported from the project or a third-party
    package, or a method of an object one built (it may sync; numpy, tqdm and wandb do
    not). A sync under a condition
    (`if step % 10 == 0: xm.mark_step()`) counts as a sync.

    ## Example
    ```python
    for step in range(num_steps):
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for step in range(num_steps):
        with torch_xla.step():          # 2.4+; or torch_xla.sync() / xm.mark_step() at the end
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
    ```

    ## References
    - torch_xla `API_GUIDE.md` single device ("Calling `xm.mark_step()` at the end of each training iteration
      causes XLA to execute its current graph")
    - torch_xla `docs/source/learn/xla-advanced.md` "Barriers"
    - torch_xla issues #3593, #6948 (out of memory without a per-step sync)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA302"
    name = "missing-step-sync"
    message = "training loop without a per-step sync: the XLA graph grows"
    fix = "end each step with torch_xla.sync()"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the header of the innermost loop that runs the backward pass'
    bad = [
        "import torch, torch_xla\n"
        "def f(model, opt):\n"
        "    x = torch.randn(8, 4, device=torch_xla.device())\n"
        "    for step in range(100):\n"
        "        model(x).sum().backward()\n"
        "        opt.step()\n",
    ]
    good = [
        "import torch, torch_xla\n"
        "def f(model, opt):\n"
        "    x = torch.randn(8, 4, device=torch_xla.device())\n"
        "    for step in range(100):\n"
        "        model(x).sum().backward()\n"
        "        opt.step()\n"
        "        torch_xla.sync()\n",
        "import torch_xla\n"
        "def f(model, opt, loader):\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        opt.step()\n",
    ]

    def check(self, model):
        fix = self.fix if self.settings.target_version >= (2, 4) else "end each step with xm.mark_step()"
        for loop in model.unsynced_step_loops():
            yield self.finding(loop.node, fix=fix)


@rule
class RaggedLastBatch(Rule):
    """## What it does
    Flags a `torch.utils.data.DataLoader(...)` that feeds a training step loop in XLA code
    (directly, through an `MpDeviceLoader` / `ParallelLoader`, a name, a helper, or a
    function's parameter) without `drop_last=True`. Reported at the `DataLoader(...)` call.
    A hint.

    ## Why is this bad?
    XLA compiles one graph per set of input shapes. When the dataset size is not a
    multiple of the batch size (times the number of replicas), the last batch of every
    epoch is smaller: a new shape, so the whole step is traced and compiled again, once
    per epoch (and once more for each distinct size).

    ## Known problems
    Whether `len(dataset)` is a multiple of the batch size cannot be known statically, so
    the hint is given even when it is. A `DistributedSampler(..., drop_last=True)` only
    evens out the replicas' shares; the loader's own last batch can still be short, so it
    does not count. Not reported when `drop_last` is not a literal (`drop_last=args.drop_last`)
    or may come from `**kwargs`, with a `batch_sampler` or `batch_size=None` (the batch
    size is then not the loader's), with `batch_size=1` or no batch size (the default, 1:
    every batch is full), for loaders that feed only evaluation loops (no
    backward, no optimizer step: one extra compile may be accepted there), for fixed-size
    generators (`xu.SampleGenerator`, not a DataLoader), and for loaders that reach the
    loop only through what cannot be seen (an imported helper).

    ## Example
    ```python
    loader = DataLoader(ds, batch_size=32, shuffle=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(ds, batch_size=32, shuffle=True, drop_last=True)
    ```
    or pad the last batch to the full size.

    ## References
    - torch_xla `docs/source/learn/troubleshoot.md` "Known Performance Caveats" ("Tensor shapes should be the same between iterations")
    - torch_xla `docs/source/perf/recompilation.md` "From input dataset"
    - torch_xla `test/test_train_mp_mnist.py` (`--drop_last`)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA304"
    name = "dataloader-ragged-last-batch"
    message = "DataLoader without drop_last=True: the short last batch recompiles the step"
    fix = "pass drop_last=True"
    severity = "W"
    versions = "2.0+"
    hint = True
    reported_at = 'the `DataLoader(...)` call'
    fix_applicability = "unsafe"
    bad = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\n"
        "from torch.utils.data import DataLoader\n"
        "def f(ds, model, opt, dev):\n"
        "    loader = pl.MpDeviceLoader(DataLoader(ds, batch_size=8), dev)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n",
    ]
    good = [
        "import torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\n"
        "from torch.utils.data import DataLoader\n"
        "def f(ds, model, opt, dev):\n"
        "    loader = pl.MpDeviceLoader(DataLoader(ds, batch_size=8, drop_last=True), dev)\n"
        "    for x in loader:\n"
        "        model(x).sum().backward()\n"
        "        xm.optimizer_step(opt)\n"
        "    for x in pl.MpDeviceLoader(DataLoader(ds, batch_size=8), dev):\n"
        "        model(x)\n",
    ]

    def check(self, model):
        for call, ctx in model.step_loaders():
            if not model.in_xla_code(ctx):
                continue
            drop = model.kwarg(call, "drop_last", 8)
            if drop is UNKNOWN or (drop is not None and model.const(drop, ctx) is not False):
                continue  # drop_last=True, or not a literal: unknown
            if model.kwarg(call, "batch_sampler", 4) is not None:
                continue  # a batch sampler decides the batch sizes (or a splat may pass one)
            size = model.kwarg(call, "batch_size", 1)
            if size is None or size is UNKNOWN or model.const(size, ctx) in (None, 1):
                continue  # the default batch_size=1 never leaves a short batch; None: no batching
            yield self.finding(call)


@rule
class GraphCutInsideStep(Rule):
    """## What it does
    Flags an explicit `torch_xla.sync()` / `xm.mark_step()` directly in the body of an XLA
    training step loop that splits one step in two: between `loss.backward()` and the
    optimizer step (`optimizer.step()`, `xm.optimizer_step`, a `GradScaler`'s
    `scaler.step(optimizer)`), or between the forward pass
    that computes the loss and `loss.backward()`. Reported at the extra sync.

    ## Why is this bad?
    Each sync compiles and launches what was traced so far as its own graph. A cut inside
    the step turns one graph per iteration into two: two device launches, and the tensors
    that cross the cut (activations, gradients) are materialized in device memory instead
    of being fused away. The XLA compiler should see the whole step as one graph.

    ## Known problems
    Only syncs directly in the loop body are checked, against backward passes and
    optimizer steps in the same block, or in both arms of an `if` after it (`if ddp:
    opt.step() else: xm.optimizer_step(opt)`); the backward passes of an inner
    accumulation loop before the sync count (`for _ in range(accum): loss.backward()`, then
    the sync, then `optimizer.step()`), an inner loop that steps itself does not; a sync or step in a helper function is not
    followed. Not reported for a trailing sync after the optimizer step (also not next to
    an `MpDeviceLoader`: redundant but harmless), for `with torch_xla.step():` scopes,
    for syncs in an inner gradient-accumulation loop or under a condition the optimizer
    step is not under (`loss.backward(); xm.mark_step(); if (i + 1) % k == 0: opt.step()`
    cuts each micro-batch on purpose, to bound memory), for a cut between two optimizers'
    steps (a GAN's discriminator and generator steps), in loops with no optimizer step
    in their own body, for a sync after setup only (building a module, moving data:
    what the loss is computed from is followed, not the callables), and under eager mode. A deliberate
    cut to bound a huge graph is still reported: silence it with `# noqa: XLA505`. An extra
    `xm.mark_step()` to drop is reported once (XLA505); one to move after the optimizer step
    is also deprecated (XLA805 too, as is every `xm.mark_step()` under `--select=XLA805`).

    ## Example
    ```python
    for x, y in mp_loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        torch_xla.sync()
        xm.optimizer_step(optimizer)
    ```

    ## Use instead
    ```python
    for x, y in mp_loader:
        loss = loss_fn(model(x), y)
        loss.backward()
        xm.optimizer_step(optimizer)      # MpDeviceLoader (or one trailing sync) cuts the step
    ```

    ## References
    - torch_xla `docs/source/learn/dynamo.md` "Feature gaps" (let the XLA compiler see the whole step as one graph)
    - torch_xla `docs/source/learn/eager.md` (enclose the complete training step in one `step_fn`)
    - Applies to torch_xla 2.0-2.9.
    """

    code = "XLA505"
    name = "graph-cut-inside-step"
    supersedes = ("XLA805",)  # deleting the extra xm.mark_step() is the fix, not renaming it (not when it moves)
    message = "sync between backward and the optimizer step splits the step into two graphs"
    fix = "drop it"
    severity = "W"
    versions = "2.0+"
    reported_at = 'the extra sync call'
    bad = [
        "import torch_xla\n"
        "def f(model, opt, x):\n"
        "    for _ in range(10):\n"
        "        model(x).sum().backward()\n"
        "        torch_xla.sync()\n"
        "        opt.step()\n",
    ]
    good = [
        "import torch_xla\n"
        "def f(model, opt, x):\n"
        "    for _ in range(10):\n"
        "        model(x).sum().backward()\n"
        "        opt.step()\n"
        "        torch_xla.sync()\n",
    ]

    def check(self, model):
        for call, ctx, kind, trailing in model.step_splitting_syncs():
            name = render(call.func)
            where = "backward and the optimizer step" if kind == "backward" else "the forward pass and backward"
            found = self.finding(call, f"{name}() between {where} splits the step into two graphs",
                                 "drop it" if trailing else "move it after the optimizer step")
            # moved, not deleted, an xm.mark_step() is still deprecated: XLA805 stays reported
            yield found if trailing else dataclasses.replace(found, covers=False)

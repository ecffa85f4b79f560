"""Training steps and the call graph they are found through: optimizers, backward passes
and optimizer steps (the step markers), step loops (a loop whose body, or a module function
it calls, steps), optimizer updates, what a call passes for a parameter, the calls of a
module function, and the closure of a per-function fact over its callers
(:meth:`Training.closure_over_callers`, :attr:`Training.HELPER_DEPTH` levels).

The other training questions live beside it: per-step syncs (:mod:`.syncs`), gradient
reduction (:mod:`.reductions`), what a loop draws its batches from (:mod:`.loaders`) and
which places run in the same pass (:mod:`.branches`).
"""

from __future__ import annotations

import ast
import re
import sys

from .scopes import UNKNOWN, Ctx, FunctionInfo, LoopInfo


class Training:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    _OPT_NAME = re.compile(r"^(?:.*_)?(?:opt|optim|optimizer|optimiser|optimizers)(?:_\w+|\d+)?$", re.I)

    def is_optimizer(self, expr: ast.AST, ctx: Ctx) -> bool:
        """True when ``expr`` holds a torch optimizer (constructed from ``torch.optim`` or so named)."""
        values = self.resolve_values(expr, ctx)
        if values:
            kinds = set()
            for v, c in values:
                q = self.call_name(v, c) if type(v) is ast.Call else None
                if q is None:
                    kinds.add("unknown")
                elif q.startswith("torch.optim.lr_scheduler") or "scheduler" in q.lower():
                    kinds.add("scheduler")
                elif q.startswith(("torch.optim.", "torch_xla.amp.syncfree.", "torch.distributed.optim.",
                                   "torch_xla.distributed.zero_redundancy_optimizer.")):
                    kinds.add("optimizer")
                else:
                    kinds.add("unknown")
            if kinds == {"optimizer"}:
                return True
            if "scheduler" in kinds:
                return False
        t = type(expr)
        ident = expr.id if t is ast.Name else expr.attr if t is ast.Attribute else None
        return bool(ident) and "sched" not in ident.lower() and bool(self._OPT_NAME.match(ident))

    def rebuilt(self, name: ast.AST, ctx: Ctx) -> bool:
        """Every binding of the name ``name`` that reaches here is what a call that takes
        the name itself gives back (``model, optimizer, dl = accelerator.prepare(model,
        optimizer, dl)``; ``optimizer = wrap(optimizer)``): a wrapper of the object, of a
        class the module cannot see (an ``AcceleratedOptimizer`` whose ``step`` runs
        ``xm.optimizer_step``). Its ``step()`` still updates; what else it does is unknown."""
        bindings = self.read_bindings(name, ctx) if type(name) is ast.Name else None
        if not bindings:
            return False
        for _, kind, target, _ in bindings:
            call = target[0] if kind == "item" and type(target) is tuple else target if kind == "value" else None
            if type(call) is not ast.Call or not any(
                    type(a) is ast.Name and a.id == name.id
                    for a in (*call.args, *(k.value for k in call.keywords))):
                return False
        return True

    def project_result(self, name: ast.AST, ctx: Ctx) -> bool:
        """Project mode: every binding of the name ``name`` that reaches here is what a call
        of a function of another project module gives back, or an item of it (``model,
        optimizer, loader = build_everything(cfg, accelerator)``): an object the module cannot
        see (the ``AcceleratedOptimizer`` an accelerator's ``prepare`` returns, whose ``step``
        runs ``xm.optimizer_step``; an instance of a project class, whose ``step`` is the
        project's). False outside project mode."""
        if self.project_lookup is None or type(name) is not ast.Name:
            return False
        bindings = self.read_bindings(name, ctx)
        if not bindings:
            return False
        for _, kind, target, bctx in bindings:
            call = target[0] if kind == "item" and type(target) is tuple else target if kind == "value" else None
            if type(call) is not ast.Call or bctx is None or not self.callee_helpers(call, bctx):
                return False
        return True

    def is_backward(self, call: ast.Call, ctx: Ctx) -> bool:
        f = call.func
        if type(f) is ast.Attribute and f.attr == "backward":
            return True
        return self.call_name(call, ctx) == "torch.autograd.backward"

    def is_optimizer_step(self, call: ast.Call, ctx: Ctx) -> bool:
        """``optimizer.step()`` on a torch optimizer (not ``xm.optimizer_step``)."""
        f = call.func
        return type(f) is ast.Attribute and f.attr == "step" and self.is_optimizer(f.value, ctx)

    #: loss scalers whose ``scaler.step(optimizer)`` runs the optimizer's step
    SCALERS = ("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cpu.amp.GradScaler",
               "torch.amp.grad_scaler.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler",
               "torch_xla.amp.GradScaler", "torch_xla.amp.grad_scaler.GradScaler",
               "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler")
    _SCALER_NAME = re.compile(r"^(?:.*_)?(?:grad_)?scaler$", re.I)

    def is_scaler_step(self, call: ast.Call, ctx: Ctx) -> bool:
        """``scaler.step(optimizer)``: a ``GradScaler`` (built from one of :attr:`SCALERS`,
        or, when its construction cannot be seen, so named) steps a torch optimizer, so an
        iteration that calls it updates the weights (``torch.cuda.amp`` / ``torch_xla.amp``
        loops: ``scaler.scale(loss).backward(); scaler.step(opt); scaler.update()``)."""
        f = call.func
        if type(f) is not ast.Attribute or f.attr != "step" or not call.args \
                or not self.is_optimizer(call.args[0], ctx):
            return False
        values = self.resolve_values(f.value, ctx)
        if values:
            return all(type(v) is ast.Call and self.call_name(v, c) in self.SCALERS for v, c in values)
        t = type(f.value)
        ident = f.value.id if t is ast.Name else f.value.attr if t is ast.Attribute else ""
        return bool(self._SCALER_NAME.match(ident))

    STEP_MARKER_CALLS = ("torch.autograd.backward", "torch_xla.core.xla_model.optimizer_step",
                         "torch_xla.core.xla_model.reduce_gradients")

    def step_markers(self) -> dict[int, tuple[ast.Call, Ctx]]:
        """id -> ``(call, ctx)`` of the calls that run backward, an optimizer step,
        ``xm.optimizer_step`` or ``xm.reduce_gradients``, from the call indexes by name
        and by method (only ``.step()`` calls are asked anything), built once. Empty in
        most modules (nothing trains there): every step-loop query answers at once then."""
        found = self._cache.get("stepmarkers")
        if found is None:
            found = {id(c): (c, x) for c, x in self.calls_to(*self.STEP_MARKER_CALLS)}
            for rec in self.method_calls("backward"):
                found[id(rec[0])] = rec
            for rec in self.method_calls("step"):
                if self.is_optimizer(rec[0].func.value, rec[1]) or self.is_scaler_step(*rec):
                    found[id(rec[0])] = rec
            if self.project_lookup is not None:  # project mode: a helper of another module that steps
                stored = self.stored_calls("markers")  # (a warm run of an unchanged project: as stored)
                if stored is not None:
                    for call, ctx in stored:
                        found[id(call)] = (call, ctx)
                else:
                    picked = []
                    for i, (call, ctx) in enumerate(self.calls):
                        if self._helper_call(call, ctx) and self.callee_agree(call, ctx, "steps"):
                            found[id(call)] = (call, ctx)  # (every function it may run steps)
                            picked.append(i)
                    self.store_answer("markers", tuple(picked))
            self._cache["stepmarkers"] = found
        return found

    def may_step(self) -> bool:
        """True when some call of the module runs backward or an optimizer step, or (project
        mode) some loop calls a function of another project module that does both once per
        call (:meth:`_project_step_call`): without one, no loop or function steps."""
        if self.step_markers():
            return True
        found = self._cache.get("projsteps")
        if found is None:
            found = self._cache["projsteps"] = self.project_lookup is not None and any(
                self._project_step_call(c, x) for loop in self.loops for c, x in loop.own)
        return found

    def _is_step_marker(self, call, ctx):
        """Backward, an optimizer step, ``xm.optimizer_step`` or ``xm.reduce_gradients``
        (``call`` is one of the module's calls: see :meth:`step_markers`)."""
        return id(call) in self.step_markers()

    #: how many helper levels the call-graph queries follow (callers of callers ...)
    HELPER_DEPTH = 32

    def closure_over_callers(self, key: str, direct: dict[int, bool], callers=None) -> dict[int, bool]:
        """``direct`` (function id -> holds by itself) closed over callers: a function that
        calls one that holds holds too, up to :attr:`HELPER_DEPTH` levels. One breadth-first
        pass over the reversed call graph (``callers``: id(callee) -> calling functions,
        default every call of the module): linear in the calls, memoised under ``key``."""
        table = self._cache.get(key)
        if table is not None:
            return table
        table = dict(direct)
        frontier = [f for f in self.functions if direct.get(id(f))]
        if callers is None and frontier:  # the reversed call graph, only when something holds
            callers = self._callers()
        level = 0
        while frontier and level < self.HELPER_DEPTH:
            level += 1
            nxt = []
            for g in frontier:
                for f in callers.get(id(g), ()):
                    if not table.get(id(f)):
                        table[id(f)] = True
                        nxt.append(f)
            frontier = nxt
        self._cache[key] = table
        return table

    def _callers(self, flat: bool = False) -> dict[int, list[FunctionInfo]]:
        """id(callee) -> the module functions calling it: through every call of the module,
        or (``flat``) only through calls outside the caller's own loops. Both built in one
        pass over the calls, once."""
        cache = self._cache
        if "callers" not in cache:
            callers: dict[int, list[FunctionInfo]] = {}
            outside: dict[int, list[FunctionInfo]] = {}
            members = self._member_names()  # (function_of's own first test, without the call)
            for f in self.functions:
                out = []
                for call, ctx in f.calls:
                    func = call.func
                    if type(func) is ast.Attribute and func.attr not in members:
                        continue
                    found = self.function_of(func, ctx)
                    if found:
                        out.extend(found)
                        if not ctx.loops:
                            for g in found:
                                outside.setdefault(id(g), []).append(f)
                cache[("dcallees", id(f))] = out  # what _direct_callees answers
                for g in out:
                    callers.setdefault(id(g), []).append(f)
            cache["callers"], cache["flat_callers"] = callers, outside
        return cache["flat_callers"] if flat else cache["callers"]

    def does_step(self, func: FunctionInfo) -> bool:
        """True when ``func`` (or a module function it calls) runs backward or an optimizer step."""
        table = self._cache.get("does_step")
        if table is None:
            markers = self.step_markers()
            if not markers:
                return False
            direct = {id(x.func): True for _, x in markers.values() if x.func is not None}
            table = self.closure_over_callers("does_step", direct)
        return table.get(id(func), False)

    def _direct_callees(self, func: FunctionInfo) -> list[FunctionInfo]:
        key = ("dcallees", id(func))
        if key not in self._cache:
            out = []
            for call, ctx in func.calls:
                out.extend(self.function_of(call.func, ctx))
            self._cache[key] = out
        return self._cache[key]

    def is_step_loop(self, loop: LoopInfo) -> bool:
        """A loop whose body (or a module function it calls) runs backward or an optimizer step."""
        markers = self.step_markers()
        if not markers and self.project_lookup is None:
            return False
        key = ("steploop", id(loop))
        if key not in self._cache:  # a marker in the body first: the helpers need the call graph
            self._cache[key] = self.loop_any(loop, "loop_marks", lambda call, ctx: id(call) in markers) \
                or self.loop_any(loop, "loop_does_step", lambda call, ctx: any(
                    self.does_step(f) for f in self.function_of(call.func, ctx))) \
                or (self.project_lookup is not None and self.loop_any(loop, "loop_project_step", self._project_step_call))
        return self._cache[key]

    def _project_step_call(self, call: ast.Call, ctx: Ctx) -> bool:
        """Project mode: ``call`` runs a function of another project module that does the
        backward and an optimizer update once per call (``HelperFacts.steps_once``:
        ``loss = train_step(model, opt, x, y)``)."""
        helper = self.project_helper(call.func, ctx, single=True)
        return helper is not None and helper.steps_once

    def loop_any(self, loop: LoopInfo, key: str, pred) -> bool:
        """``any(pred(call, ctx) for call, ctx in loop.calls)`` (nested loops included),
        memoised per loop under ``key`` (one key per predicate): each call is tested once, in
        its innermost loop, and a loop's answer is its inner loops' or its own calls'. N
        nested loops cost their calls once, not once per enclosing loop; iterative (nesting
        needs no recursion)."""
        cache = self._cache
        found = cache.get((key, id(loop)))
        if found is None:
            todo = [loop]
            while todo:
                lp = todo[-1]
                pending = [i for i in lp.inner if (key, id(i)) not in cache]
                if pending:
                    todo.extend(pending)
                    continue
                todo.pop()
                cache[(key, id(lp))] = any(cache[(key, id(i))] for i in lp.inner) \
                    or any(pred(call, ctx) for call, ctx in lp.own)
            found = cache[(key, id(loop))]
        return found

    def loop_of(self, node: ast.AST) -> LoopInfo | None:
        for loop in self.loops:
            if loop.node is node:
                return loop
        return None

    def _imported_helper(self, call: ast.Call, ctx: Ctx) -> bool:
        """A call of a function imported from another module of the project or a third-party
        package (a relative import included); not torch, torch_xla or the standard library."""
        q = self.call_name(call, ctx)
        if q is not None:
            root = q.split(".", 1)[0]
            return root not in ("torch", "torch_xla", "builtins") and root not in sys.stdlib_module_names
        f = call.func
        if type(f) is not ast.Name or self.function_of(f, ctx):
            return False
        bindings = self.lookup(f.id, ctx, None)  # `from .dist import wrap` binds an unknown name
        return bool(bindings) and all(kind == "unknown" and b_ctx is not None and b_ctx.scope is self.module_scope
                                      for _, kind, _, b_ctx in bindings)

    def _helper_call(self, call: ast.Call, ctx: Ctx) -> bool:
        """:meth:`_imported_helper`, or in project mode ``backend.m(...)`` whose targets the
        project knows (:meth:`callee_helpers`: the classes the receiver holds, an override):
        a call whose project facts say what it does (steps, updates, syncs)."""
        if self._imported_helper(call, ctx):
            return True
        f = call.func
        return type(f) is ast.Attribute and self.project_lookup is not None and self.call_name(call, ctx) is None \
            and bool(self.callee_helpers(call, ctx))

    def argument_for(self, call: ast.Call, ctx: Ctx, func: FunctionInfo, param: str):
        """The argument ``call`` passes for ``func``'s parameter ``param``: the expression,
        None when absent, UNKNOWN when a splat may supply it. ``self`` is skipped for
        ``obj.method(...)`` / ``self.method(...)`` calls."""
        for kw in call.keywords:
            if kw.arg == param:
                return kw.value
        if param not in func.params:
            return UNKNOWN if any(kw.arg is None for kw in call.keywords) else None
        index = func.params.index(param)
        decorators = {d.id for d in func.node.decorator_list if type(d) is ast.Name}
        if func.cls is not None and "staticmethod" not in decorators:
            f = call.func
            if func.name == "__init__" and type(f) is ast.Name and self.class_named(f.id, ctx) is not None:
                index -= 1  # Trainer(model, loader): the constructor call fills __init__ after self
            else:
                bound = type(f) is ast.Attribute and not (type(f.value) is ast.Name
                                                          and self.class_named(f.value.id, ctx) is not None)
                if bound or "classmethod" in decorators:
                    index -= 1
                if type(f) is not ast.Attribute:
                    return UNKNOWN
        if index < 0:
            return UNKNOWN
        for i, arg in enumerate(call.args):
            if type(arg) is ast.Starred:
                return UNKNOWN
            if i == index:
                return arg
        return UNKNOWN if any(kw.arg is None for kw in call.keywords) else None

    def calls_of(self, func: FunctionInfo) -> list[tuple[ast.Call, Ctx]]:
        """Every call in the module whose callee resolves to ``func`` (indexed once); a
        constructor call ``Cls(...)`` calls ``Cls.__init__``."""
        index = self._cache.get("calls_of")
        if index is None:
            index = {}
            for call, ctx in self.calls:
                if self.call_name(call, ctx) is None:
                    for f in self.function_of(call.func, ctx):
                        index.setdefault(id(f), []).append((call, ctx))
                    if type(call.func) is ast.Name:  # Cls(...) calls Cls.__init__
                        cls = self.class_named(call.func.id, ctx)
                        if cls is not None:
                            for f in self._mro_methods(cls, "__init__"):
                                index.setdefault(id(f), []).append((call, ctx))
            self._cache["calls_of"] = index
        return index.get(id(func), [])

    def _is_update(self, call, ctx) -> bool:
        """An optimizer update: ``opt.step()`` on a torch optimizer, ``xm.optimizer_step(opt)``,
        ``scaler.step(opt)`` (each a step marker), or a call of another project module's helper that runs one."""
        if self.is_optimizer_step(call, ctx) or self.call_name(call, ctx) == self.OPTIMIZER_STEP \
                or self.is_scaler_step(call, ctx):
            return True
        if self.project_lookup is not None and self._helper_call(call, ctx):
            return bool(self.callee_agree(call, ctx, "updates"))
        return False

    def func_updates(self, func: FunctionInfo) -> bool:
        """True when ``func`` (or a module function it calls) runs an optimizer update."""
        markers = self.step_markers()
        table = self._cache.get("updates")
        if table is None:
            direct = {id(x.func): True for c, x in markers.values() if x.func is not None and self._is_update(c, x)}
            table = self.closure_over_callers("updates", direct)
        return bool(table.get(id(func)))

    def loop_steps_optimizer(self, loop: LoopInfo) -> bool:
        """The loop body (nested loops included) or a module function it calls (followed
        :attr:`HELPER_DEPTH` levels) runs an optimizer step: an iteration updates the weights
        (a training loop, not a gradient check)."""
        key = ("loop_updates", id(loop))
        if key not in self._cache:
            markers = self.step_markers()
            table = self._cache.get("updates")
            if table is None:  # only a function holding a step marker can update by itself
                direct = {id(x.func): True for c, x in markers.values() if x.func is not None and self._is_update(c, x)}
                table = self.closure_over_callers("updates", direct)
            self._cache[key] = bool(markers) and self.loop_any(loop, "loop_update_calls", lambda c, x: (
                id(c) in markers and self._is_update(c, x) or any(table.get(id(f)) for f in self.function_of(c.func, x))))
        return self._cache[key]

    def _contains_step_loop_call(self, loop: LoopInfo) -> bool:
        """The loop calls a module function that itself holds a step loop (followed
        :attr:`HELPER_DEPTH` levels), or in project mode another module's function that does:
        the inner loop is the one that runs the step."""
        table = self._cache.get("holds_step_loop")
        if table is None:
            direct = {}
            for lp in self.loops:
                if lp.ctx.func is not None and self.is_step_loop(lp):
                    direct[id(lp.ctx.func)] = True
            table = self.closure_over_callers("holds_step_loop", direct)
        return self.loop_any(loop, "loop_calls_step_loop", lambda c, x: any(
            table.get(id(f)) for f in self.function_of(c.func, x)) or self._project_holds_step_loop(c, x))

    def _project_holds_step_loop(self, call: ast.Call, ctx: Ctx) -> bool:
        """Project mode: ``call`` runs a function of another project module whose own loop
        runs the step (``HelperFacts.holds_step_loop``: ``fit(model, loader, opt)``)."""
        if self.project_lookup is None:
            return False
        helper = self.project_helper(call.func, ctx, single=True)
        return helper is not None and helper.holds_step_loop

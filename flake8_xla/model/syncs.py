"""Per-step syncs: the calls that cut the XLA graph (``torch_xla.sync``, ``mark_step``,
``xm.optimizer_step(..., barrier=True)``, ``torch_xla.step``, compiled steps, found through
helpers and, in project mode, other modules' helpers), loops that sync each iteration,
step loops over visible data with no cut (XLA302), calls that may sync where it cannot
be seen, eager mode, and syncs that split one training step (XLA505).
"""

from __future__ import annotations

import ast

from .scopes import Ctx, FunctionInfo, LoopInfo, _case_test

#: in-graph collectives of torch_xla: their result is a new lazy device tensor (traced, run
#: at the next sync), unlike ``xm.mesh_reduce``, which copies its input to the host and waits
DEVICE_COLLECTIVES = frozenset("torch_xla.core.xla_model." + n for n in (
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute", "collective_broadcast"))


class Syncs:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    SYNCS = ("torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.step",
             "torch_xla._XLAC._xla_step_marker", "torch_xla.debug.profiler.StepTrace")

    OPTIMIZER_STEP = "torch_xla.core.xla_model.optimizer_step"

    def is_sync_call(self, call: ast.Call, ctx: Ctx) -> bool:
        """A call that cuts the graph itself: ``torch_xla.sync()``, ``xm.mark_step()``,
        ``torch_xla.step()``, ``xm.optimizer_step(..., barrier=True)``."""
        q = self.call_name(call, ctx)
        if q in self.SYNCS:
            return True
        return q == self.OPTIMIZER_STEP and self.const(self.kwarg(call, "barrier", 1), ctx) is True

    def _param_barrier(self, call: ast.Call, ctx: Ctx) -> bool:
        """``xm.optimizer_step(opt, barrier=barrier)`` with ``barrier`` a parameter of the
        function: a caller may pass ``True`` (``finish_step(opt, True)``), so calling the
        function may cut the graph (unknown, as a sync)."""
        if self.call_name(call, ctx) != self.OPTIMIZER_STEP:
            return False
        arg = self.kwarg(call, "barrier", 1)
        if type(arg) is not ast.Name or ctx.func is None:
            return False
        bindings = self.lookup(arg.id, ctx, None)
        return bool(bindings) and all(kind == "param" for _, kind, _, _ in bindings)

    def _compiled(self, func: FunctionInfo) -> bool:
        """A ``@torch_xla.compile``d function (it syncs before and after)."""
        return id(func) in self._compiled_ids()

    def _compiled_ids(self) -> frozenset[int]:
        found = self._cache.get("compiled_ids")
        if found is None:
            found = self._cache["compiled_ids"] = frozenset(
                id(f) for f in self.functions if f.node.decorator_list and any(
                    self.qualname(d.func if type(d) is ast.Call else d, f.ctx) in self.COMPILERS
                    for d in f.node.decorator_list))
        return found

    def func_syncs(self, func: FunctionInfo) -> bool:
        """True when calling ``func`` cuts the graph: it (or a helper it calls, followed
        :attr:`HELPER_DEPTH` levels) syncs, or it is a ``@torch_xla.compile``d step."""
        table = self._cache.get("func_syncs")
        if table is None:
            direct = dict.fromkeys(self._compiled_ids(), True)
            for c, x in self.calls_to(*self.SYNCS, self.OPTIMIZER_STEP):
                if x.func is not None and (self.is_sync_call(c, x) or self._param_barrier(c, x)):
                    direct[id(x.func)] = True
            if self.project_lookup is not None:
                for c, x in self.calls:  # super().after_step() of a base another module defines, which syncs
                    if x.func is not None and id(x.func) not in direct and self._super_project_syncs(c, x):
                        direct[id(x.func)] = True
            table = self.closure_over_callers("func_syncs", direct)
            decorated = [f for f in self.functions if f.node.decorator_list]
            wrapped = {}
            if decorated:  # a decorator whose wrapper (a def nested in it) syncs
                inner: dict[int, list] = {}
                for f in self.functions:
                    if f.ctx.func is not None:
                        inner.setdefault(id(f.ctx.func), []).append(f)
                wrapped = {id(f): True for f in decorated if any(
                    any(table.get(id(g)) or any(table.get(id(h)) for h in inner.get(id(g), ()))
                        for g in self.function_of(d, f.ctx)) or self._project_decorator_syncs(d, f.ctx)
                    for d in (d.func if type(d) is ast.Call else d for d in f.node.decorator_list))}
            if any(k not in table or not table[k] for k in wrapped):  # @synced def step(...): its wrapper syncs
                table = self.closure_over_callers("func_syncs_wrapped", {**direct, **wrapped})
            self._cache["func_syncs"] = table
        return table.get(id(func), False)

    def _super_project_syncs(self, call: ast.Call, ctx: Ctx) -> bool:
        """``super().m(...)`` in a method whose class's bases of the module define no ``m``,
        and a base another project module defines (named by an import) has an ``m`` that
        syncs."""
        f = call.func
        if type(f) is not ast.Attribute or type(f.value) is not ast.Call or type(f.value.func) is not ast.Name \
                or f.value.func.id != "super" or ctx.func is None or ctx.func.cls is None:
            return False
        if self.function_of(f, ctx):
            return False  # a base of the module defines it: the module's own table answers
        for base in ctx.func.cls.node.bases:
            if type(base) in (ast.Name, ast.Attribute):
                helper = self.project_helper(base, ctx, method=f.attr)
                if helper is not None:
                    return bool(helper.syncs)
        return False

    def _project_decorator_syncs(self, d: ast.AST, ctx: Ctx) -> bool:
        """Project mode: the decorator ``d`` is another project module's function whose code
        (its wrapper) syncs (``@synced`` imported from ``xla_step``)."""
        if self.project_lookup is None or type(d) not in (ast.Name, ast.Attribute):
            return False
        helper = self.project_helper(d, ctx)
        return bool(helper is not None and helper.syncs)

    def _context_syncs(self, call: ast.Call, ctx: Ctx) -> bool:
        """``call`` is a ``with`` item whose ``__enter__`` or ``__exit__`` syncs: a class of the
        module (:meth:`context_methods`), or in project mode one another module defines."""
        if any(self.func_syncs(f) for f in self.context_methods(call, ctx)):
            return True
        if self.project_lookup is None or type(call.func) not in (ast.Name, ast.Attribute):
            return False
        if id(call) not in (self._cache.get("with_ids") or ()):
            return False
        for method in ("__exit__", "__enter__"):
            helper = self.project_helper(call.func, ctx, method=method)
            if helper is not None and helper.syncs:
                return True
        return False

    def context_methods(self, call: ast.Call, ctx: Ctx) -> list:
        """The ``__enter__`` and ``__exit__`` methods that run for ``call`` when it is the
        context expression of a ``with`` (``with StepScope():``, ``StepScope`` a class of the
        module); ``[]`` otherwise."""
        ids = self._cache.get("with_ids")
        if ids is None:
            ids = self._cache["with_ids"] = {id(e) for e, _ in self.with_items}
        if id(call) not in ids or type(call.func) is not ast.Name:
            return []
        cls = self.class_named(call.func.id, ctx)
        if cls is None:
            return []
        return self._mro_methods(cls, "__enter__") + self._mro_methods(cls, "__exit__")

    def loop_syncs(self, loop: LoopInfo, every_step: bool = False) -> bool:
        """True when the loop body cuts the graph each iteration (sync, mark_step, barrier=True,
        step(), a compiled step), directly or in a helper it calls at any (bounded) depth, or
        the loop draws from a generator of the module that syncs per item (attributes.py).
        A sync under a condition counts, unless ``every_step``: then one under a step gate
        of the loop (``if step % 10 == 0: xm.mark_step()``) cuts every N-th iteration only
        and does not (:meth:`step_gated`)."""
        key = ("loopsyncs", id(loop), every_step)
        if key in self._cache:
            return self._cache[key]
        gate = "_every" if every_step else ""

        def ungated(ctx):
            return not every_step or not self.step_gated(ctx)

        result = self.loop_any(loop, "loop_cuts" + gate, lambda call, ctx: (
            self.is_sync_call(call, ctx) or self._calls_compiled(call, ctx)) and ungated(ctx)) \
            or self.loop_any(loop, "loop_calls_sync" + gate, lambda call, ctx: any(
                self.func_syncs(f) for f in self.function_of(call.func, ctx)) and ungated(ctx)) \
            or (bool(self.with_items) and self.loop_any(loop, "loop_cm_syncs" + gate, lambda call, ctx:
                self._context_syncs(call, ctx) and ungated(ctx))) \
            or (self.project_lookup is not None
                and self.loop_any(loop, "loop_project_syncs", self._project_syncs)) \
            or any(self.generator_syncs_per_item(e, loop.ctx) for e in self.loop_iterables(loop))
        self._cache[key] = result
        return result

    def step_gated(self, ctx: Ctx) -> bool:
        """Code at ``ctx`` runs under a step gate (``if step % N == 0:``, the ``else`` of ``if
        step % N:``) whose test sits inside its innermost loop: every N-th iteration only."""
        if not ctx.loops or not ctx.frames:
            return False
        node = ctx.loops[-1].node
        lo, hi = node.lineno, getattr(node, "end_lineno", None) or node.lineno
        link = ctx.frames
        while link is not None:
            frame = link.frame
            if type(frame) is tuple and len(frame) == 2 and isinstance(frame[0], ast.expr) \
                    and lo < frame[0].lineno <= hi:
                sign = self._gate_polarity(frame[0], ctx)
                if (sign > 0 and frame[1]) or (sign < 0 and not frame[1]):
                    return True
            link = link.parent
        return False

    def _project_syncs(self, call: ast.Call, ctx: Ctx) -> bool:
        """Project mode: ``call`` runs a helper of another project module that syncs (itself,
        or on the ``xm`` module the call passes it; a method of the one project class a
        parameter holds: ``backend.barrier()``)."""
        if not self._helper_call(call, ctx):
            return False
        helpers = self.callee_helpers(call, ctx)
        if not helpers:
            return False
        if any(h.syncs for h in helpers):
            return True  # (one target that syncs: the loop may be synced, nothing to report)
        if len(helpers) != 1:
            return False
        helper = helpers[0]
        for index, name in helper.param_syncs:  # train_fn(loader, model, xm): xm.optimizer_step(barrier=True)
            arg = self.kwarg(call, name, index)
            if isinstance(arg, ast.AST) and self.qualname(arg, ctx) == "torch_xla.core.xla_model":
                return True
        return False

    def _calls_compiled(self, call: ast.Call, ctx: Ctx) -> bool:
        """``step(...)`` where ``step = torch_xla.compile(step_fn)``."""
        if self.call_name(call, ctx) is None and type(call.func) in (ast.Name, ast.Attribute):
            values = self.values(call.func, ctx)
            return bool(values) and all(type(v) is ast.Call and self.call_name(v, c) in self.COMPILERS for v, c in values)
        return False

    COMPILERS = ("torch_xla.compile",)

    EAGER = ("torch_xla.experimental.eager_mode", "torch_xla.experimental.eager.eager_mode",
             "torch_xla._XLAC._set_use_eager_mode")

    def eager_mode(self) -> bool:
        """True when XLA-on code turns eager mode on (``torch_xla.experimental.eager_mode(True)``,
        torch_xla 2.4+): ops run at once, no lazy graph grows between syncs."""
        if "eager" not in self._cache:
            self._cache["eager"] = any(
                self.const(self.kwarg(call, "enable", 0), ctx) is True and self.in_xla_code(ctx)
                for call, ctx in self.calls_to(*self.EAGER)) or self._project_eager()
        return self._cache["eager"]

    def _project_eager(self) -> bool:
        """Project mode: XLA code here calls a project helper of another module that switches
        eager mode (``device = setup_eager()``; on or off cannot be told there: unknown, as
        eager; :meth:`helper_calls_any`)."""
        return self.helper_calls_any(self.EAGER)

    def helper_calls_any(self, names) -> bool:
        """Project mode: XLA code of this module calls a project helper of another module
        whose code, or what it calls, calls one of the torch_xla / torch functions ``names``
        (``broadcast_init(model)`` running ``xm.broadcast_master_param``). Memoised per names."""
        if self.project_lookup is None:
            return False
        key = ("helper_calls_any", tuple(names))
        found = self._cache.get(key)
        if found is None:
            wanted = frozenset(names)
            found = False
            for call, ctx in self.calls:
                if self._imported_helper(call, ctx) and self.in_xla_code(ctx):
                    helper = self.project_helper(call.func, ctx)
                    if helper is not None and helper.xla_calls & wanted:
                        found = True
                        break
            self._cache[key] = found
        return found

    def unseen_sync_call(self, call: ast.Call, ctx: Ctx) -> bool:
        """True when ``call`` may cut the graph where it cannot be seen (a third-party or
        project helper, ``next()`` of an unseen iterator); see :meth:`_unseen_sync_possible`."""
        return self._unseen_sync_call(call, ctx)

    def _unseen_sync_call(self, call: ast.Call, ctx: Ctx) -> bool:
        f = call.func
        if type(f) is ast.Name and f.id == "next" and self.lookup("next", ctx, None) is None:
            return not call.args or not self.iterable_seen(call.args[0], ctx)
        if type(f) is ast.Attribute and f.attr == "__next__":
            return True
        if type(f) in (ast.Name, ast.Subscript, ast.Call) and self.unknown_callee(call, ctx):
            return True  # for h in after_step: h(step, loss): what runs cannot be seen
        if self._imported_helper(call, ctx):
            helper = self.project_helper(f, ctx)  # a project module's function: what it does
            if helper is not None:
                return helper.may_sync
            q = self.call_name(call, ctx) or ""
            return q not in self.SAMPLE_GENERATORS and q.split(".", 1)[0] not in self._QUIET_LIBRARIES
        if type(f) is ast.Attribute and type(f.value) is ast.Name and self.call_name(call, ctx) is None:
            # engine.train_step(...) on an object built by an imported class or helper
            for v, c in self.values(f.value, ctx) or ():
                if type(v) is ast.Call and c is not None and self._imported_helper(v, c):
                    helper = self.project_helper(v.func, c, method=f.attr)  # a project class's method
                    if helper is not None and not helper.may_sync:
                        continue
                    q = self.call_name(v, c) or ""
                    if q.split(".", 1)[0] not in self._QUIET_LIBRARIES:
                        return True
        return False

    def _unseen_sync_possible(self, loop: LoopInfo) -> bool:
        """True when the loop (or a module function it calls, followed :attr:`HELPER_DEPTH`
        levels) may cut the graph where it cannot be seen: it calls a function imported from
        another module of the project or a third-party package, or advances with ``next()``
        an iterator that is not seen."""
        table = self._cache.get("unseen_sync")
        if table is None:
            direct = {id(f): any(self._unseen_sync_call(c, x) for c, x in f.calls) for f in self.functions}
            table = self.closure_over_callers("unseen_sync", direct)
        return self.loop_any(loop, "loop_unseen_sync", lambda c, x: self._unseen_sync_call(c, x) or any(
            table.get(id(f)) for f in self.function_of(c.func, x)))

    #: libraries whose calls never cut an XLA graph (logging, progress bars, numpy)
    _QUIET_LIBRARIES = ("numpy", "tqdm", "wandb", "tensorboardX", "absl", "matplotlib", "pandas")

    def unsynced_step_loops(self) -> list[LoopInfo]:
        """Innermost step loops in XLA code with no per-iteration graph cut, drawing only from
        visible data (:meth:`iterable_seen`), as are the loops around them in the function;
        no enclosing loop syncs, no loop inside runs the step, the function is not called
        from inside another loop, and nothing unseen may sync, in the loop or, for an inner
        accumulation loop, in the loop around it that takes the optimizer step (its body
        draws the micro-batches: ``for x, y in get_micro_batches(it, accum):`` with
        ``next(it)`` of an iterator not seen inside). Empty under eager mode, with a
        training framework, or where ``torch.compile`` / dynamo is used."""
        if "unsynced_steps" in self._cache:
            return self._cache["unsynced_steps"]
        out: list[LoopInfo] = []
        step_loops = [lp for lp in self.loops if self.is_step_loop(lp)]
        if step_loops and not (self.eager_mode() or self.uses_framework()
                               or any(q.startswith(("torch.compile", "torch._dynamo")) for q in self.used_names())):
            inner_of: set[int] = set()  # ids of the loops around a step loop
            for lp in step_loops:
                for o in reversed(lp.ctx.loops):  # innermost first, up to one marked already
                    if id(o) in inner_of:
                        break  # (its outer loops were marked with it)
                    inner_of.add(id(o))
            for lp in step_loops:
                if id(lp) in inner_of or not self.in_xla_code(lp.ctx):
                    continue  # a loop inside runs the step: that one is reported
                chain = list(lp.ctx.loops) + [lp]
                if not any(self.loop_steps_optimizer(o) for o in chain):
                    continue  # backward only (a test, a gradient check, accumulation a caller steps)
                if any(self.loop_syncs(o) for o in chain):
                    continue
                if not all(self.iterable_seen(e, o.ctx) for o in chain for e in self.loop_iterables(o)):
                    continue
                if any(type(o.node) in (ast.For, ast.AsyncFor) and not self.loop_iterables(o) for o in chain):
                    continue
                func = lp.ctx.func
                if func is not None and any(c.loops for _, c in self.calls_of(func)):
                    continue  # called per step from a caller's loop: that loop decides
                if func is not None and id(func) in self._compiled_targets():
                    continue  # a loop traced inside one torch_xla.compile'd graph, on purpose
                if self._contains_step_loop_call(lp) or self._unseen_sync_possible(lp):
                    continue
                owner = next((o for o in reversed(chain) if self.loop_steps_optimizer(o)), lp)
                if owner is not lp and self._unseen_sync_possible(owner):
                    continue  # an accumulation loop: the loop that steps may cut once per step where it cannot be seen
                if any(self.loader_kind(a, c) in ("plain", "device")
                       for call, c in lp.calls for a in call.args if type(a) is not ast.Starred):
                    continue  # batches drawn from a loader some other way: XLA301's, or synced
                out.append(lp)
        self._cache["unsynced_steps"] = out
        return out

    def _compiled_targets(self) -> set[int]:
        """ids of module functions ``@torch_xla.compile``d or passed to ``torch_xla.compile``."""
        if "compiled_targets" not in self._cache:
            out = set(self._compiled_ids())
            for call, ctx in self.calls_to(*self.COMPILERS):
                target = self.kwarg(call, "func", 0)
                if isinstance(target, ast.AST):
                    out.update(id(f) for f in self.function_of(target, ctx))
            self._cache["compiled_targets"] = out
        return self._cache["compiled_targets"]

    CUTS = ("torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla._XLAC._xla_step_marker")

    def _loss_feeders(self, backward: ast.Call, ctx: Ctx, limit: int = 48) -> list[ast.Call]:
        """The calls the loss of ``backward`` is computed from in the same function: the
        receiver of ``loss.backward()`` (or the first argument of
        ``torch.autograd.backward``) followed through names to the calls producing it."""
        key = ("feeders", id(backward))
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = out = self._loss_feeders_uncached(backward, ctx, limit)
        return out

    def _loss_feeders_uncached(self, backward, ctx, limit):
        f = backward.func
        root = f.value if type(f) is ast.Attribute and f.attr == "backward" else (
            backward.args[0] if backward.args and type(backward.args[0]) is not ast.Starred else None)
        if root is None:
            return []
        out: list[ast.Call] = []
        todo = [(root, ctx)]
        seen: set[int] = set()
        while todo and len(seen) < limit:
            expr, c = todo.pop()
            if id(expr) in seen:
                continue
            seen.add(id(expr))
            t = type(expr)
            if t is ast.Call:  # the call producing a value: follow its inputs, not the callable
                out.append(expr)
                todo.extend((a.value if type(a) is ast.Starred else a, c) for a in expr.args)
                todo.extend((k.value, c) for k in expr.keywords)
                if type(expr.func) is ast.Attribute:
                    todo.append((expr.func.value, c))  # loss.mean(), out.logits: the receiver
            elif t is ast.Name:
                for _, kind, target, b_ctx in self.lookup(expr.id, c, getattr(expr, "lineno", None)) or ():
                    if kind == "value" and b_ctx is not None and b_ctx.func is ctx.func \
                            and isinstance(target, ast.AST):
                        todo.append((target, b_ctx))
            elif t in (ast.Attribute, ast.Subscript, ast.Starred):
                todo.append((expr.value, c))
            elif t is ast.BinOp:
                todo.extend(((expr.left, c), (expr.right, c)))
            elif t is ast.UnaryOp:
                todo.append((expr.operand, c))
            elif t in (ast.Tuple, ast.List):
                todo.extend((e, c) for e in expr.elts)
        return out

    #: tensor methods that move, cast or reshape data: a sync after them cuts no computation
    _DATA_METHODS = frozenset((
        "to", "cpu", "cuda", "detach", "float", "half", "bfloat16", "double", "long", "int", "bool",
        "view", "reshape", "contiguous", "clone", "squeeze", "unsqueeze", "permute", "transpose",
        "flatten", "size", "numel", "item", "requires_grad_", "pin_memory", "type", "chunk",
        "split", "unbind", "get", "items", "values", "keys", "__getitem__", "copy_", "zero_grad"))

    def _computes(self, call: ast.Call, ctx: Ctx) -> bool:
        """A call that may run model computation: ``model(x)``, ``criterion(out, y)``,
        ``self.model(x)``, a module helper; not a torch/torch_xla function, an imported
        one, a builtin, or a tensor method that moves, casts or reshapes data."""
        if self.call_name(call, ctx) is not None:
            return False
        f = call.func
        if type(f) is ast.Name:
            return self.lookup(f.id, ctx, None) is not None
        return type(f) is ast.Attribute and f.attr not in self._DATA_METHODS

    def step_splitting_syncs(self) -> list[tuple[ast.Call, Ctx, str, bool]]:
        """Explicit syncs (``torch_xla.sync()``, ``xm.mark_step()``) directly in an XLA step
        loop's body that split one step: an optimizer step follows in the same block with a
        backward before the sync (in the body, or in an accumulation loop of the body that
        takes no step itself) and no optimizer step between them (``"backward"``), or a
        backward follows whose loss was computed (in part) before the sync with no optimizer
        step in between (``"forward"``). Trailing syncs, syncs in inner (accumulation) loops
        or under another condition than the step, and helpers are left alone. The last item
        says whether the loop also cuts after its optimizer step (the sync can just go)."""
        if "split_syncs" in self._cache:
            return self._cache["split_syncs"]
        out = []
        if not self.eager_mode():
            for sync, sctx in self.calls_to(*self.CUTS):
                if not sctx.loops or not self.in_xla_code(sctx):
                    continue
                loop = sctx.loops[-1]
                if not self.is_step_loop(loop):
                    continue
                kind = self._splits(sync, sctx, loop)
                if kind:
                    out.append((sync, sctx, kind, self._cut_after_step(sync, sctx, loop)))
        out.sort(key=lambda t: (t[0].lineno, t[0].col_offset))
        self._cache["split_syncs"] = out
        return out

    def _loop_takes_step(self, loop) -> bool:
        """Some call in ``loop`` (nested loops included) is an optimizer step (memoised)."""
        key = ("loop_takes_step", id(loop))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = any(self.is_optimizer_step(c, x) or self.call_name(c, x) == self.OPTIMIZER_STEP
                                           for c, x in loop.calls)
        return found

    def _cut_after_step(self, sync, sctx, loop) -> bool:
        """Another sync follows the last optimizer step of the loop body (or the loop syncs by
        itself through a device loader): the extra one can simply go."""
        if any(self.loader_kind(e, loop.ctx) == "device" for e in self.loop_iterables(loop)):
            return True
        _, steps, _, _, _ = self._cache[("step_events", id(loop))]
        last = max(((c.lineno, c.col_offset) for c, _ in steps), default=None)
        if last is None:
            return False
        return any((c.lineno, c.col_offset) > last and id(c) in self._cache["cut_ids"]
                   and x.loops and x.loops[-1] is loop and not self.branch_frames(x)
                   for c, x in loop.calls) or self._compiled_or_scoped_after(loop, last)

    def _compiled_or_scoped_after(self, loop, last) -> bool:
        return any((c.lineno, c.col_offset) > last and self.call_name(c, x) in ("torch_xla.step",)
                   for c, x in loop.calls)

    def _direct_cuts(self, loop, direct, cut_ids) -> int:
        key = ("direct_cuts", id(loop))
        if key not in self._cache:
            self._cache[key] = sum(1 for c, _ in direct if id(c) in cut_ids)
        return self._cache[key]

    def _direct_ctx(self, loop, direct):
        key = ("direct_ctx", id(loop))
        table = self._cache.get(key)
        if table is None:
            table = self._cache[key] = {id(c): x for c, x in direct}
        return table

    def _splits(self, sync, sctx, loop):
        pos = (sync.lineno, sync.col_offset)
        frames = self.branch_frames(sctx)
        key = ("step_events", id(loop))
        events = self._cache.get(key)
        if events is None:  # once per loop: its direct calls (the loop's own body, same function)
            direct = [(c, x) for c, x in loop.calls if x.loops and x.loops[-1] is loop]
            steps = [(c, x) for c, x in direct if self.is_optimizer_step(c, x) or self.is_scaler_step(c, x)
                     or self.call_name(c, x) == self.OPTIMIZER_STEP]
            # any `.step()` (optD.step(), a scheduler) ends a step for the "no step between" tests
            any_steps = steps + [(c, x) for c, x in direct if type(c.func) is ast.Attribute and c.func.attr == "step"]
            backwards = [(c, x) for c, x in direct if self.is_backward(c, x)]
            # the backward passes of an accumulation loop inside the step (`for _ in
            # range(accum): ...; loss.backward()`), an inner loop that takes no step itself
            inner = [(c, x) for c, x in loop.calls if x.loops and x.loops[-1] is not loop and loop in x.loops
                     and x.func is loop.ctx.func and self.is_backward(c, x)
                     and not self._loop_takes_step(x.loops[x.loops.index(loop) + 1])]
            events = self._cache[key] = (direct, steps, any_steps, backwards, inner)
        direct, steps, any_steps, backwards, inner = events
        if not steps:
            return None  # no optimizer step in this loop's body: not one training step
        cut_ids = self._cache.get("cut_ids")
        if cut_ids is None:
            cut_ids = self._cache["cut_ids"] = {id(c) for c, _ in self.calls_to(*self.CUTS)}
        if len(any_steps) > 32 or len(backwards) > 32 or self._direct_cuts(loop, direct, cut_ids) > 32:
            return None  # generated code: bounded work per sync, silent

        def at(c):
            return (c.lineno, c.col_offset)

        def same_block(c, x):
            return self.branch_frames(x) == frames and not self.exclusive((sync, sctx), (c, x))

        def before_runs(c, x):  # runs whenever the sync runs
            return self.branch_frames(x) <= frames and not self.exclusive((sync, sctx), (c, x))

        def stepped_between(lo, hi):
            return any(lo < at(c) < hi for c, _ in any_steps)

        later_steps = [(c, x) for c, x in steps if at(c) > pos and same_block(c, x)]
        if not later_steps:  # `if ddp: opt.step() else: xm.optimizer_step(opt)`: a step either way
            arms = set()
            for c, x in steps:
                extra = self.branch_frames(x) - frames
                if at(c) > pos and len(extra) == 1 and frames <= self.branch_frames(x) \
                        and not self.exclusive((sync, sctx), (c, x)):
                    arms |= extra
            later_steps = [k for k, p in arms if (k, not p) in arms]
        if later_steps:
            for b, bx in backwards + inner:
                if at(b) < pos and before_runs(b, bx) and not stepped_between(at(b), pos):
                    return "backward"
        for b, bx in backwards:
            if at(b) <= pos or not same_block(b, bx):
                continue
            body_lines = (loop.node.lineno, pos[0])
            for c in self._loss_feeders(b, bx):
                if self._computes(c, bx) and body_lines[0] < c.lineno and at(c) < pos and not stepped_between(at(c), pos) \
                        and id(c) not in cut_ids:
                    cx = self._direct_ctx(loop, direct).get(id(c))
                    if cx is not None and before_runs(c, cx):
                        return "forward"
        return None

    # ------------------------------------------------------------ after the step's sync
    def post_sync_sites(self) -> list[tuple[ast.AST, Ctx, bool, str, int]]:
        """``(node, ctx, gated, where, epoch)`` for the calls, f-strings and ``%`` formats of
        the step code that run after a sync statement of the same iteration (what
        :meth:`~.tensors.Tensors.step_sites` leaves out: ``torch_xla.sync(); print(...)``).
        ``epoch`` counts the syncs met on the way: two nodes with the same ``epoch`` (and
        ``id(ctx.func)``) run between the same two syncs. Gates (``if step % N == 0:``) as in
        the step walk; helpers called there are not followed; ``xm.add_step_closure``
        arguments and evaluation loops are left out. Walked once, iteratively."""
        cached = self._cache.get("postsyncsites")
        if cached is not None:
            return cached
        # (lazy: tensors.py imports this module; the step walk's node tables are its own)
        from .scopes import _child_fields
        from .tensors import _LEAVES, _SITE_NODES, _SKIP_NODES, _stmt_fields
        self.step_sites()
        out: list = []
        self._cache["postsyncsites"] = out
        starts: dict[tuple[int, int], tuple] = {}
        for stmts, i, gated, ctx, where in self._cache.get("postsync", ()):
            key = (id(stmts), i)
            if key not in starts or (starts[key][2] and not gated):  # ungated wins
                starts[key] = (stmts, i, gated, ctx, where)
        closure_ids = self._closure_args()
        seen: set[int] = set()
        epoch = 0
        for stmts, start, gated, ctx, where in starts.values():
            epoch += 1
            stack = [(stmts, start, gated, epoch)]
            while stack:
                block, i, g, ep = stack.pop()
                if i >= len(block):
                    continue
                stmt = block[i]
                t = type(stmt)
                if self._is_sync_stmt(stmt, ctx):
                    epoch += 1
                    if t in (ast.With, ast.AsyncWith):
                        stack.append((block, i + 1, g, epoch))
                        stack.append((stmt.body, 0, g, ep))  # the block runs before its sync
                    else:
                        stack.append((block, i + 1, g, epoch))
                    continue
                stack.append((block, i + 1, g, ep))
                if t in _SKIP_NODES or self._eval_loop(stmt, ctx):
                    continue
                exprs, blocks = [], []
                if t is ast.If:
                    polarity = self._gate_polarity(stmt.test, ctx)
                    exprs.append((stmt.test, g))
                    if polarity < 0 and stmt.body and isinstance(stmt.body[-1], (ast.Continue, ast.Return, ast.Break)):
                        stack[-1] = (block, i + 1, True, ep)
                    blocks = [(stmt.orelse, g or polarity < 0), (stmt.body, g or polarity > 0)]
                else:
                    for field, is_block in _stmt_fields(t):
                        value = getattr(stmt, field, None)
                        if is_block:
                            if value:
                                blocks.append((value, g))
                        elif type(value) is list:
                            for v in value:
                                if type(v) is ast.ExceptHandler:
                                    blocks.append((v.body, g))
                                elif type(v) is ast.match_case:  # `match step % N: case 0:` gates
                                    blocks.append((v.body, g or self._gate_polarity(_case_test(v), ctx) > 0))
                                elif type(v) is ast.withitem:
                                    exprs.append((v.context_expr, g))
                                elif isinstance(v, ast.expr):
                                    exprs.append((v, g))
                        elif isinstance(value, ast.expr):
                            exprs.append((value, g))
                    if t is ast.While:
                        exprs.append((stmt.test, g))
                for expr, eg in exprs:
                    todo = [expr]
                    while todo:
                        n = todo.pop()
                        nt = type(n)
                        if nt in _LEAVES or nt in _SKIP_NODES or id(n) in closure_ids:
                            continue
                        if (nt is ast.Call or nt in _SITE_NODES) and id(n) not in seen:
                            seen.add(id(n))
                            out.append((n, (self.call_ctx(n) or ctx) if nt is ast.Call else ctx, eg, where, ep))
                        for field in _child_fields(nt):
                            v = getattr(n, field, None)
                            if type(v) is list:
                                todo.extend(v)
                            elif v is not None:
                                todo.append(v)
                for blk, bg in reversed(blocks):
                    stack.append((blk, 0, bg, ep))
        return out

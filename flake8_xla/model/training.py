"""Training loops, syncs and reductions: optimizers, backward passes and optimizer steps,
step loops, per-step graph cuts (``torch_xla.sync``, ``mark_step``, ``barrier=True``,
compiled steps, found through helpers), what a step loop draws its batches from (a plain
DataLoader, a device loader, a parameter a caller fills), the ``DataLoader(...)`` calls that
feed a step loop, whether a loop's data can be seen at all, syncs that split one step, and
what in the module reduces gradients by itself (DDP, FSDP, SPMD).
"""

from __future__ import annotations

import ast
import bisect
import collections
import re
import sys

from .names import canonical
from .scopes import UNKNOWN, Ctx, FunctionInfo, LoopInfo, _expr_key


_BLOCK_ITEMS = (ast.stmt, ast.excepthandler, ast.match_case)


def _end(body: list) -> int:
    last = body[-1] if body else None
    return getattr(last, "end_lineno", None) or getattr(last, "lineno", 0)


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

    def is_backward(self, call: ast.Call, ctx: Ctx) -> bool:
        f = call.func
        if type(f) is ast.Attribute and f.attr == "backward":
            return True
        return self.call_name(call, ctx) == "torch.autograd.backward"

    def is_optimizer_step(self, call: ast.Call, ctx: Ctx) -> bool:
        """``optimizer.step()`` on a torch optimizer (not ``xm.optimizer_step``)."""
        f = call.func
        return type(f) is ast.Attribute and f.attr == "step" and self.is_optimizer(f.value, ctx)

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
                if self.is_optimizer(rec[0].func.value, rec[1]):
                    found[id(rec[0])] = rec
            if self.project_lookup is not None:  # project mode: a helper of another module that steps
                for call, ctx in self.calls:
                    if self._imported_helper(call, ctx):
                        helper = self.project_helper(call.func, ctx)
                        if helper is not None and helper.steps:
                            found[id(call)] = (call, ctx)
            self._cache["stepmarkers"] = found
        return found

    def may_step(self) -> bool:
        """True when some call of the module runs backward or an optimizer step: without one,
        no loop or function steps."""
        return bool(self.step_markers())

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
        if not markers:
            return False
        key = ("steploop", id(loop))
        if key not in self._cache:  # a marker in the body first: the helpers need the call graph
            self._cache[key] = self.loop_any(loop, "loop_marks", lambda call, ctx: id(call) in markers) \
                or self.loop_any(loop, "loop_does_step", lambda call, ctx: any(
                    self.does_step(f) for f in self.function_of(call.func, ctx)))
        return self._cache[key]

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
                if x.func is not None and self.is_sync_call(c, x):
                    direct[id(x.func)] = True
            table = self.closure_over_callers("func_syncs", direct)
        return table.get(id(func), False)

    def loop_syncs(self, loop: LoopInfo) -> bool:
        """True when the loop body cuts the graph each iteration (sync, mark_step, barrier=True,
        step(), a compiled step), directly or in a helper it calls at any (bounded) depth, or
        the loop draws from a generator of the module that syncs per item (attributes.py)."""
        key = ("loopsyncs", id(loop))
        if key in self._cache:
            return self._cache[key]
        result = self.loop_any(loop, "loop_cuts", lambda call, ctx: self.is_sync_call(call, ctx)
                               or self._calls_compiled(call, ctx)) \
            or self.loop_any(loop, "loop_calls_sync", lambda call, ctx: any(
                self.func_syncs(f) for f in self.function_of(call.func, ctx))) \
            or (self.project_lookup is not None
                and self.loop_any(loop, "loop_project_syncs", self._project_syncs)) \
            or any(self.generator_syncs_per_item(e, loop.ctx) for e in self.loop_iterables(loop))
        self._cache[key] = result
        return result

    def _project_syncs(self, call: ast.Call, ctx: Ctx) -> bool:
        """Project mode: ``call`` runs a helper of another project module that syncs (itself,
        or on the ``xm`` module the call passes it)."""
        if not self._imported_helper(call, ctx):
            return False
        helper = self.project_helper(call.func, ctx)
        if helper is None:
            return False
        if helper.syncs:
            return True
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

    #: wrappers and optimizers that reduce the gradients themselves: they count only where
    #: XLA code names them (a leftover import, or DDP only in the CUDA branch, reduces nothing)
    REDUCING_WRAPPERS = (
        "torch.nn.parallel.DistributedDataParallel",
        "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",
        "torch_xla.distributed.spmd.SpmdFullyShardedDataParallel",
        "torch_xla.experimental.spmd_fully_sharded_data_parallel",
        "torch_xla.distributed.zero_redundancy_optimizer.ZeroRedundancyOptimizer",
        "torch.distributed.fsdp",
        "torch.distributed._composable.fsdp",
        "torch.distributed.optim.ZeroRedundancyOptimizer",
        "torch.distributed.algorithms",
    )
    #: SPMD and training frameworks: importing them is enough (the module runs under them)
    _REDUCING_IMPORTS = (
        "torch_xla.distributed.spmd",
        "torch_xla.experimental.xla_sharding",
        "torch_xla.runtime.use_spmd",
    )
    #: training frameworks count where code uses their training objects (constructs one, or
    #: subclasses one), not for an imported utility (`from accelerate.utils import set_seed`)
    _FRAMEWORKS = (
        "accelerate.Accelerator", "accelerate.accelerator.Accelerator",
        "lightning.Trainer", "lightning.pytorch.Trainer", "lightning.Fabric", "lightning.fabric.Fabric",
        "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
        "pytorch_lightning.Trainer", "pytorch_lightning.LightningModule",
        "transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
        "transformers.trainer_seq2seq.Seq2SeqTrainer",
        "ignite.engine", "ignite.distributed", "composer.Trainer", "composer.trainer",
    )

    EAGER = ("torch_xla.experimental.eager_mode", "torch_xla.experimental.eager.eager_mode",
             "torch_xla._XLAC._set_use_eager_mode")

    def eager_mode(self) -> bool:
        """True when XLA-on code turns eager mode on (``torch_xla.experimental.eager_mode(True)``,
        torch_xla 2.4+): ops run at once, no lazy graph grows between syncs."""
        if "eager" not in self._cache:
            self._cache["eager"] = any(
                self.const(self.kwarg(call, "enable", 0), ctx) is True and self.in_xla_code(ctx)
                for call, ctx in self.calls_to(*self.EAGER))
        return self._cache["eager"]

    def uses_framework(self) -> bool:
        """True when XLA-on code constructs a training framework's object (``Accelerator()``,
        ``Trainer(...)``, ``Fabric(...)``) or a class subclasses one (``LightningModule``)."""
        if "framework" not in self._cache:
            found = any(q.startswith(self._FRAMEWORKS) and any(self.in_xla_code(ctx) for _, ctx in recs)
                        for q, recs in self.call_index().items())  # one test per qualified name
            if not found:
                found = any(
                    (self.qualname(base, cls.ctx) or "").startswith(self._FRAMEWORKS)
                    for cls in self.classes for base in cls.node.bases)
            setup = self.project_setup  # project mode: a launching module's framework runs this code
            self._cache["framework"] = found or bool(setup is not None and setup.framework)
        return self._cache["framework"]

    def reduces_gradients_elsewhere(self) -> bool:
        """True when the module uses something that reduces gradients itself.

        DDP, XLA FSDP, FSDPv2, ZeRO-1 or torch FSDP named in XLA-on code (not a leftover
        import, not a CUDA-only branch); SPMD (``xr.use_spmd``, ``torch_xla.distributed.spmd``,
        ``XLA_USE_SPMD``); a training framework's object used in XLA-on code (``Accelerator()``,
        a Lightning ``Trainer`` or ``LightningModule``, the HF ``Trainer``); a
        model re-bound by a helper imported from another module (``model = wrap(model)``:
        it may wrap it, unknown); or a call in XLA-on code to one of the user's in-house
        reducers (``xla-reducing-calls``). In project mode also when a module whose launched
        code reaches this one's functions reduces them (:attr:`project_setup`).
        """
        if "reduces" not in self._cache:
            setup = self.project_setup
            self._cache["reduces"] = (
                bool(setup is not None and setup.reduces)
                or self.uses_spmd()
                or any(q.startswith(self._REDUCING_IMPORTS) for q in self.used_names())
                or self.uses_framework()
                or self.names_in_xla_code(self.REDUCING_WRAPPERS)
                or self.rewrapped_by_import()
                or any(self.in_xla_code(ctx) for _, ctx in self.calls_named(self.settings.reducing_calls)))
        return self._cache["reduces"]

    def names_in_xla_code(self, prefixes: tuple[str, ...]) -> bool:
        """True when XLA-on code names something under ``prefixes``: an attribute chain, or a
        name bound by a from-import of it (the import statement itself does not count)."""
        for prefix in ("torch", "torch_xla"):
            for node, q, ctx in self.references(prefix):
                if type(node) is ast.Attribute and q.startswith(prefixes) and self.in_xla_code(ctx):
                    return True
        for _, alias, full, _ in self.import_froms:
            if not canonical(full).startswith(prefixes):
                continue
            bound = alias.asname or alias.name
            for ctx in self.name_loads.get(bound, ()):
                bindings = self.lookup(bound, ctx, None)
                if bindings and any(kind == "import" and canonical(target).startswith(prefixes)
                                    for _, kind, target, _ in bindings) and self.in_xla_code(ctx):
                    return True
        return False

    _MODEL_NAME = re.compile(r"(?i)model|net|module")

    def rewrapped_by_import(self) -> bool:
        """``model = wrap(model)`` (or ``self.model = wrap(self.model)``) in XLA-on code with
        ``wrap`` imported from another module (not torch, not the standard library): it may
        wrap the model in DDP or FSDP, which cannot be seen."""
        if "rewrapped" in self._cache:
            return self._cache["rewrapped"]
        result = False
        modules = set()
        for call, _ in self.method_calls("parameters", "named_parameters"):
            base = call.func.value
            modules.add(base.id if type(base) is ast.Name else base.attr if type(base) is ast.Attribute else None)
        scopes = [(self.module_scope.bindings, None)] + [(f.scope.bindings, f) for f in self.functions if f.scope]
        for bindings, _ in scopes:
            for name, entries in bindings.items():
                if result:
                    break
                for _, kind, target, b_ctx in entries:
                    if kind == "value" and type(target) is ast.Call and b_ctx is not None \
                            and (name in modules or self._MODEL_NAME.search(name)) \
                            and self._imported_helper(target, b_ctx) and self._passes(target, name) \
                            and self.in_xla_code(b_ctx):
                        result = True
                        break
        if not result:
            for cls in self.classes:
                for attr, assigned in cls.attrs.items():
                    if any(type(v) is ast.Call and c is not None and self._imported_helper(v, c)
                           and self._passes(v, attr) and self.in_xla_code(c) for v, c in assigned):
                        result = True
        self._cache["rewrapped"] = result
        return result

    @staticmethod
    def _passes(call: ast.Call, name: str) -> bool:
        for arg in list(call.args) + [k.value for k in call.keywords]:
            node = arg.value if type(arg) is ast.Starred else arg
            if (type(node) is ast.Name and node.id == name) or (type(node) is ast.Attribute and node.attr == name):
                return True
        return False

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

    def used_names(self) -> list[str]:
        """Every dotted name the module imports or reaches through torch / torch_xla chains."""
        if "used_names" not in self._cache:
            names = [q for _, q, _ in self.references("torch")] + [q for _, q, _ in self.references("torch_xla")]
            names += [full for _, _, full, _ in self.imports + self.import_froms]
            self._cache["used_names"] = names
        return self._cache["used_names"]

    def uses_spmd(self) -> bool:
        """SPMD: ``xr.use_spmd()``, ``torch_xla.distributed.spmd`` (or the old
        ``experimental.xla_sharding``), or ``XLA_USE_SPMD`` set in the environment."""
        if "spmd" not in self._cache:
            self._cache["spmd"] = any(
                q == "torch_xla.runtime.use_spmd" or q.startswith(("torch_xla.distributed.spmd",
                                                                   "torch_xla.experimental.xla_sharding"))
                for q in self.used_names()) or any(key == "XLA_USE_SPMD" for key, _, _, _ in self.env_writes()) \
                or bool(self.project_setup is not None and self.project_setup.spmd)  # project mode: the launcher's
        return self._cache["spmd"]

    # -- loaders: what a step loop iterates -------------------------------------------------

    DATALOADER = "torch.utils.data.DataLoader"
    DEVICE_LOADERS = ("torch_xla.distributed.parallel_loader.MpDeviceLoader",
                      "torch_xla.distributed.parallel_loader.ParallelLoader.per_device_loader")
    _BUILTIN_WRAPPERS = ("enumerate", "iter", "reversed")  # the loader is their first argument

    def loader_kind(self, expr: ast.AST, ctx: Ctx, _depth: int = 0):
        """What an iterated expression draws its batches from.

        ``"plain"``: a ``torch.utils.data.DataLoader(...)``; ``"device"``: an XLA device
        loader (``pl.MpDeviceLoader``, ``ParallelLoader(...).per_device_loader``), which
        syncs per batch; ``("param", func, name)``: a parameter of a module function;
        ``None``: anything else, or what cannot be seen.

        Followed through names and ``self.`` attributes (every assignment must agree),
        ``enumerate`` / ``iter`` / ``zip`` / ``itertools.islice`` / ``tqdm`` (a device loader
        anywhere in a ``zip`` wins), module functions and methods returning a loader (a
        parameter they return maps back to the call's argument), and tuple items
        (``loader, sampler = make()``). Bounded to 8 levels; memoised per node.
        """
        key = ("lk", id(expr))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None  # a cycle resolves to unknown
        result = self._loader_kind(expr, ctx, _depth) if _depth <= 8 else None
        cache[key] = result
        return result

    @staticmethod
    def _agree(kinds: list):
        if not kinds or any(k is None for k in kinds):
            return None
        first = kinds[0]
        return first if all(k == first for k in kinds) else None

    def _loader_kind(self, expr, ctx, depth):
        t = type(expr)
        if t is ast.Call:
            q = self.call_name(expr, ctx)
            if q == self.DATALOADER:
                return "plain"
            f = expr.func
            if q in self.DEVICE_LOADERS or (type(f) is ast.Attribute and f.attr == "per_device_loader"):
                return "device"
            inner = self._wrapped_iterables(expr, ctx, q)
            if inner is not None:
                kinds = [self.loader_kind(e, ctx, depth + 1) for e in inner]
                if "device" in kinds:
                    return "device"
                if len(inner) > 1:  # zip(a, b): one plain loader is enough, unless a device loader syncs
                    return "plain" if "plain" in kinds else None
                return kinds[0] if kinds else None
            if q is not None:
                return None
            funcs = self.function_of(f, ctx)
            if len(funcs) == 1 and type(f) is ast.Name:  # a generator: what its loops draw (attributes.py)
                kind = self.generator_loader_kind(expr, ctx, funcs[0], depth)
                if kind is not False:
                    return kind
            if len(funcs) != 1 or not funcs[0].returns:
                return None
            func = funcs[0]
            kinds = []
            for value, vctx in func.returns:
                kind = self.loader_kind(value, vctx, depth + 1)
                if type(kind) is tuple and kind[1] is func:  # returns its parameter: the call's argument
                    arg = self.argument_for(expr, ctx, func, kind[2])
                    kind = self.loader_kind(arg, ctx, depth + 1) if isinstance(arg, ast.AST) else None
                kinds.append(kind)
            return self._agree(kinds)
        if t is ast.Name:
            bindings = self.read_bindings(expr, ctx)
            if not bindings:
                return None
            kinds = []
            for _, kind, target, b_ctx in bindings:
                if kind == "param" and target is not None and ctx.func is target:
                    kinds.append(("param", target, expr.id))
                elif kind == "value" and b_ctx is not None:
                    kinds.append(self.loader_kind(target, b_ctx, depth + 1))
                elif kind == "item" and b_ctx is not None:
                    item = self._tuple_item(target[0], target[1], b_ctx, depth)
                    kinds.append(self.loader_kind(item[0], item[1], depth + 1) if item else None)
                else:
                    return None
            return self._agree(kinds)
        if t is ast.Attribute:
            values = self.values(expr, ctx)
            if values and all(v is not None and c is not None for v, c in values):
                return self._agree([self.loader_kind(v, c, depth + 1) for v, c in values])
        return None

    def _wrapped_iterables(self, call: ast.Call, ctx: Ctx, q: str | None):
        """The iterables a pass-through wrapper iterates (``enumerate(x)`` -> ``[x]``), or None."""
        f = call.func
        ident = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else None
        if ident is None:
            return None
        builtin = q is None and type(f) is ast.Name and self.lookup(ident, ctx, None) is None
        if builtin and ident == "zip":
            return [a for a in call.args if type(a) is not ast.Starred] or None
        first = call.args[0] if call.args and type(call.args[0]) is not ast.Starred else None
        if builtin and ident in self._BUILTIN_WRAPPERS \
                or q in ("itertools.islice", "itertools.cycle") \
                or (q is not None and q.split(".", 1)[0] == "tqdm" and q.rsplit(".", 1)[1] in ("tqdm", "tqdm_notebook")):
            if first is None and ident == "tqdm":
                first = self.kwarg(call, "iterable")
            return [first] if isinstance(first, ast.AST) else None
        return None

    def _tuple_item(self, value: ast.AST, index: int, ctx: Ctx, depth: int):
        """Item ``index`` of what ``value`` evaluates to: a tuple literal, directly, through a
        name, or returned by a module function (every return must be a literal tuple)."""
        todo = [(value, ctx)]
        out = []
        seen = 0
        while todo:
            e, c = todo.pop()
            seen += 1
            if seen > 16:
                return None
            if type(e) in (ast.Tuple, ast.List):
                if index >= len(e.elts) or any(type(x) is ast.Starred for x in e.elts):
                    return None
                out.append((e.elts[index], c))
            elif type(e) is ast.Name:
                vals = self.values(e, c)
                if not vals:
                    return None
                todo.extend(vals)
            elif type(e) is ast.Call and self.call_name(e, c) is None:
                funcs = self.function_of(e.func, c)
                if len(funcs) != 1 or not funcs[0].returns:
                    return None
                todo.extend(funcs[0].returns)
            else:
                return None
        return out[0] if len(out) == 1 else None

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

    def loop_iterables(self, loop: LoopInfo) -> list[ast.AST]:
        """What the loop draws batches from: the ``for`` iterable, and the iterators that
        builtin ``next(it)`` / ``next(it, None)`` advances directly in its body or header
        (``while (b := next(it, None)) is not None:``)."""
        key = ("loopiters", id(loop))
        if key in self._cache:
            return self._cache[key]
        out = []
        node = loop.node
        if type(node) in (ast.For, ast.AsyncFor):
            out.append(node.iter)
        for call, ctx in loop.own:  # directly in its body (or header), not in a nested loop
            f = call.func
            if type(f) is ast.Name and f.id == "next" and call.args \
                    and type(call.args[0]) is not ast.Starred and self.lookup("next", ctx, None) is None:
                out.append(call.args[0])
        self._cache[key] = out
        return out

    def unsynced_loader_loops(self) -> list[tuple[LoopInfo, object]]:
        """Step loops in XLA code with no per-step sync that draw batches from a plain
        DataLoader (``(loop, "plain")``) or from a parameter of their function that no
        device loader wraps (``(loop, ("param", func, name))``); evaluation loops and loops
        over a device loader are left out."""
        if "unsynced_loops" in self._cache:
            return self._cache["unsynced_loops"]
        out = []
        for loop in self.loops if self.may_step() else ():
            iterables = self.loop_iterables(loop)
            if not iterables or not self.in_xla_code(loop.ctx):
                continue
            kinds = [self.loader_kind(e, loop.ctx) for e in iterables]
            if "device" in kinds or not any(k == "plain" or type(k) is tuple for k in kinds):
                continue
            if not self.is_step_loop(loop) or self.loop_syncs(loop):
                continue
            found = "plain" if "plain" in kinds else next(k for k in kinds if type(k) is tuple)
            out.append((loop, found))
        self._cache["unsynced_loops"] = out
        return out

    def loader_params(self) -> dict[tuple[int, str], LoopInfo]:
        """``(id(func), param) -> loop``: a parameter whose value some unsynced step loop
        iterates unwrapped, in ``func`` itself or in a module function it passes the
        parameter on to (followed :attr:`HELPER_DEPTH` levels up the callers)."""
        if "loader_params" in self._cache:
            return self._cache["loader_params"]
        table: dict[tuple[int, str], LoopInfo] = {}
        frontier = []
        for loop, kind in self.unsynced_loader_loops():
            if type(kind) is tuple and (id(kind[1]), kind[2]) not in table:
                table[(id(kind[1]), kind[2])] = loop
                frontier.append((kind[1], kind[2]))
        level = 0
        while frontier and level < self.HELPER_DEPTH:
            level += 1
            nxt = []
            for callee, param in frontier:
                for call, ctx in self.calls_of(callee):
                    caller = ctx.func
                    arg = self.argument_for(call, ctx, callee, param)
                    if caller is None or not isinstance(arg, ast.AST):
                        continue
                    kind = self.loader_kind(arg, ctx)
                    if type(kind) is tuple and (id(kind[1]), kind[2]) not in table:
                        table[(id(kind[1]), kind[2])] = table[(id(callee), param)]
                        nxt.append((kind[1], kind[2]))
            frontier = nxt
        self._cache["loader_params"] = table
        return table

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

    # -- branches: which calls can run in the same pass --------------------------------------

    #: branch frames read per place; past it the outer frames are one opaque mark (generated
    #: code: hundreds of early returns in one function), so every query stays bounded
    BRANCH_LIMIT = 64

    def branch_frames(self, ctx: Ctx) -> frozenset:
        """The ``if`` branches around ``ctx`` as ``(test key, polarity)`` pairs, ``not`` and
        negated comparisons folded in (``if not tpu:`` is the ``False`` branch of ``if tpu:``).
        Only the innermost :attr:`BRANCH_LIMIT` frames are read; a deeper chain adds a mark
        naming the link where reading stopped, so two places compare equal or nested past
        the limit only when they share that link (linear work: N early returns would
        otherwise cost N frames at each of N places)."""
        key = ("bframes", id(ctx))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        items = self._cache.get("bitems")
        if items is None:
            items = self._cache["bitems"] = {}
        out = set()
        node = ctx.frames or None
        for _ in range(self.BRANCH_LIMIT):
            if node is None:
                break
            frame = node.frame
            if isinstance(frame, tuple):
                fkey = (id(frame[0]), frame[1])
                item = items.get(fkey, items)
                if item is items:
                    item = items[fkey] = self._branch_item(*frame)
                if item is not None:
                    out.add(item)
            node = node.parent
        if node is not None:
            out.add((("deeper", id(node)), True))
        result = self._cache[key] = frozenset(out)
        return result

    def _branch_item(self, test, polarity):
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, polarity = test.operand, not polarity
        if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in self._NEGATED:
            test = ast.Compare(test.left, [self._NEGATED[type(test.ops[0])]()], test.comparators)
            polarity = not polarity
        k = _expr_key(test)
        return None if k is None else (k, polarity)

    _NEGATED = {ast.NotEq: ast.Eq, ast.IsNot: ast.Is, ast.NotIn: ast.In}

    def exclusive(self, a: tuple[ast.AST, Ctx], b: tuple[ast.AST, Ctx]) -> bool:
        """True when the two nodes never run in the same pass: opposite branches of one ``if``
        (or of ``if t: ...; continue``), different ``case`` arms of one ``match``, or a
        ``try`` body and its handler."""
        fa, fb = self.branch_frames(a[1]), self.branch_frames(b[1])
        if any((k, not p) in fb for k, p in fa):
            return True
        owner = a[1].func.node if a[1].func is not None else self.tree
        in_a = self._arms_at(owner, a[0].lineno)
        if not in_a:
            return False
        in_b = self._arms_at(owner, b[0].lineno)
        return any(arm != in_b.get(group, arm) for group, arm in in_a.items())

    def _arms_at(self, owner: ast.AST, line: int) -> dict[int, int]:
        """{group: arm} for the arms of :meth:`_arms` (``match``/``try`` groups) whose lines
        hold ``line``, found by bisect and the chain of enclosing arms (arms nest like the
        blocks they are), memoised per line: a query costs the nesting depth, not the
        number of ``try`` blocks in ``owner``."""
        key = ("arm_index", id(owner))
        index = self._cache.get(key)
        if index is None:
            spans = sorted((lo, -hi, group, arm) for group, arms in enumerate(self._arms(owner))
                           for arm, (lo, hi) in enumerate(arms))
            starts, ends, parent, stack = [s[0] for s in spans], [-s[1] for s in spans], [], []
            for j, lo in enumerate(starts):
                while stack and ends[stack[-1]] < lo:
                    stack.pop()
                parent.append(stack[-1] if stack else -1)
                stack.append(j)
            index = self._cache[key] = (starts, ends, parent, [(s[2], s[3]) for s in spans], {})
        starts, ends, parent, labels, memo = index
        found = memo.get(line)
        if found is None:
            found = memo[line] = {}
            j = bisect.bisect_right(starts, line) - 1
            while j >= 0 and ends[j] < line:  # the innermost arm holding the line encloses arm j
                j = parent[j]
            while j >= 0:
                group, arm = labels[j]
                found.setdefault(group, arm)
                j = parent[j]
        return found

    def _arms(self, owner: ast.AST) -> list[list[tuple[int, int]]]:
        """Line spans of the mutually exclusive arms of each ``match`` and ``try`` in
        ``owner`` (memoised; walked only when a rule asks about two calls in it)."""
        key = ("arms", id(owner))
        if key in self._cache:
            return self._cache[key]
        out = []
        todo = collections.deque([owner])  # breadth first, like ast.walk, through statements only:
        while todo:  # a try or match never sits inside an expression
            node = todo.popleft()
            for field in node._fields:
                v = getattr(node, field, None)
                if type(v) is list and v and isinstance(v[0], _BLOCK_ITEMS):
                    todo.extend(v)
            t = type(node)
            if t is ast.Match:
                out.append([(c.pattern.lineno, _end(c.body)) for c in node.cases])
            elif t is ast.Try or t is getattr(ast, "TryStar", None):
                if node.body and node.handlers:
                    out.append([(node.body[0].lineno, _end(node.body))]
                               + [(h.lineno, _end(h.body)) for h in node.handlers])
        self._cache[key] = out
        return out

    def runs_with(self, a: tuple[ast.AST, Ctx], b: tuple[ast.AST, Ctx]) -> bool:
        """True when there is a visible path on which both run: they are not exclusive, and
        the branches around one are all around the other (whenever the more guarded one
        runs, so does the other); two different unrelated conditions are unknown."""
        if self.exclusive(a, b):
            return False
        fa, fb = self.branch_frames(a[1]), self.branch_frames(b[1])
        return fa <= fb or fb <= fa

    # -- visible data sources and unsynced step loops (XLA302, XLA304) -----------------------

    SAMPLE_GENERATORS = ("torch_xla.utils.utils.SampleGenerator",)
    _KNOWN_BUILTINS = ("enumerate", "zip", "reversed", "iter", "sorted", "list", "tuple")

    def iterable_seen(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
        """True when ``expr`` visibly yields no device loader and no torch DataLoader:
        ``range(n)``, literals, comprehensions over such, tensors from ``torch.*`` calls,
        ``xu.SampleGenerator``, through names, ``self.`` attributes, builtin and
        ``itertools`` / ``tqdm`` wrappers and module helpers' returns. A parameter, an
        imported helper's result, a loop target or anything unseen is False (it may be an
        ``MpDeviceLoader``). Memoised per node, bounded to 8 levels."""
        key = ("seen_iter", id(expr))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = False  # a cycle is unknown
        result = _depth <= 8 and self._iterable_seen(expr, ctx, _depth)
        cache[key] = result
        return result

    def _iterable_seen(self, expr, ctx, depth):
        t = type(expr)
        if t is ast.Constant:
            return True
        if t in (ast.List, ast.Tuple, ast.Set):
            return all(self.iterable_seen(e, ctx, depth + 1) for e in expr.elts)
        if t in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            return all(self.iterable_seen(g.iter, ctx, depth + 1) for g in expr.generators)
        if t is ast.Subscript:
            return self.iterable_seen(expr.value, ctx, depth + 1)
        if t is ast.Name:
            bindings = self.read_bindings(expr, ctx)
            if not bindings:
                return False
            return all(kind == "value" and b_ctx is not None and self.iterable_seen(target, b_ctx, depth + 1)
                       for _, kind, target, b_ctx in bindings)
        if t is ast.Attribute:
            values = self.values(expr, ctx)
            return bool(values) and all(v is not None and c is not None and self.iterable_seen(v, c, depth + 1)
                                        for v, c in values)
        if t is not ast.Call:
            return False
        args = [a.value if type(a) is ast.Starred else a for a in expr.args]
        q = self.call_name(expr, ctx)
        f = expr.func
        if q is None and type(f) is ast.Name and self.lookup(f.id, ctx, None) is None:
            if f.id in ("range", "len"):
                return True
            if f.id in ("enumerate", "iter", "reversed", "sorted", "list", "tuple"):
                args = args[:1]
            return f.id in self._KNOWN_BUILTINS and bool(args) and all(
                self.iterable_seen(a, ctx, depth + 1) for a in args)
        if q is not None:
            if q in self.SAMPLE_GENERATORS:
                return True
            if q == self.DATALOADER or q.startswith(("torch_xla.", "torch.utils.data")):
                return False  # a loader (plain or device), or an XLA utility
            if q.startswith("torch.") or q.startswith("math."):
                return True  # a tensor (torch.randn, torch.split, ...)
            if q == "itertools.count":
                return True
            if q.startswith("itertools.") or q.split(".", 1)[0] == "tqdm":
                if q in ("itertools.islice", "itertools.cycle") or q.split(".", 1)[0] == "tqdm":
                    args = args[:1]
                return bool(args) and all(self.iterable_seen(a, ctx, depth + 1) for a in args)
        helper = self.project_helper(f, ctx)  # a generator of host tensors in another module
        if helper is not None:
            return helper.yields_seen
        if q is not None:
            return False
        funcs = self.function_of(f, ctx)
        if funcs:
            return len(funcs) == 1 and bool(funcs[0].returns) and all(
                self.iterable_seen(v, c, depth + 1) for v, c in funcs[0].returns)
        if type(f) is ast.Attribute:  # x.split(4), t.chunk(2): what the receiver holds
            return self.iterable_seen(f.value, ctx, depth + 1)
        return False

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
        from inside another loop, and nothing unseen may sync. Empty under eager mode, with a
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
                if any(self.loader_kind(a, c) in ("plain", "device")
                       for call, c in lp.calls for a in call.args if type(a) is not ast.Starred):
                    continue  # batches drawn from a loader some other way: XLA301's, or synced
                out.append(lp)
        self._cache["unsynced_steps"] = out
        return out

    def _is_update(self, call, ctx) -> bool:
        """An optimizer update: ``opt.step()`` on a torch optimizer, ``xm.optimizer_step(opt)``
        (each a step marker), or a call of another project module's helper that runs one."""
        if self.is_optimizer_step(call, ctx) or self.call_name(call, ctx) == self.OPTIMIZER_STEP:
            return True
        if self.project_lookup is not None and self._imported_helper(call, ctx):
            helper = self.project_helper(call.func, ctx)
            return helper is not None and helper.updates
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

    def _contains_step_loop_call(self, loop: LoopInfo) -> bool:
        """The loop calls a module function that itself holds a step loop (followed
        :attr:`HELPER_DEPTH` levels): the inner loop is the one that runs the step."""
        table = self._cache.get("holds_step_loop")
        if table is None:
            direct = {}
            for lp in self.loops:
                if lp.ctx.func is not None and self.is_step_loop(lp):
                    direct[id(lp.ctx.func)] = True
            table = self.closure_over_callers("holds_step_loop", direct)
        return self.loop_any(loop, "loop_calls_step_loop", lambda c, x: any(
            table.get(id(f)) for f in self.function_of(c.func, x)))

    PARALLEL_LOADER = "torch_xla.distributed.parallel_loader.ParallelLoader"

    def loader_sources(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> list[tuple[ast.Call, Ctx]]:
        """The ``DataLoader(...)`` calls an iterated expression draws its batches from, also
        through a device loader wrapping one (``pl.MpDeviceLoader(loader, dev)``,
        ``ParallelLoader(loader, [dev]).per_device_loader(dev)``), names, ``self.``
        attributes, ``enumerate`` / ``zip`` / ``iter`` / ``islice`` / ``tqdm``, module
        helpers' returns, tuple items and a function's parameter (the arguments its callers
        in the module pass). What cannot be seen adds nothing. Memoised, 8 levels."""
        return self._sources(expr, ctx, _depth, False)

    def loader_origins(self, expr: ast.AST, ctx: Ctx) -> list[tuple[ast.Call, Ctx]]:
        """The calls whose value an iterated expression draws from that the module cannot see
        into, followed as :meth:`loader_sources` follows names, wrappers and helpers: a call of
        another module's function (``build_dataloader(ds, 32)``, imported from a project
        module) or of a name nothing in the module binds to a function. Project mode asks it
        of the step loops (:meth:`step_loader_origins`) to tell another module that the loader
        its function returns is trained on."""
        return self._sources(expr, ctx, 0, True)

    def _sources(self, expr, ctx, depth: int, opaque: bool) -> list:
        key = ("lsrc", id(expr), opaque)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = []  # cycles add nothing
        result = self._loader_sources(expr, ctx, depth, opaque) if depth <= 8 else []
        cache[key] = result
        return result

    def _loader_sources(self, expr, ctx, depth, opaque):
        t = type(expr)
        out: list = []
        if t is ast.Call:
            q = self.call_name(expr, ctx)
            f = expr.func
            if q == self.DATALOADER:
                return [] if opaque else [(expr, ctx)]
            if q in (self.DEVICE_LOADERS[0], self.PARALLEL_LOADER):
                inner = self.kwarg(expr, "loader", 0)
                return self._sources(inner, ctx, depth + 1, opaque) if isinstance(inner, ast.AST) else []
            if type(f) is ast.Attribute and f.attr == "per_device_loader":
                return self._sources(f.value, ctx, depth + 1, opaque)
            inner = self._wrapped_iterables(expr, ctx, q)
            if inner is not None:
                for e in inner:
                    out.extend(self._sources(e, ctx, depth + 1, opaque))
                return out
            if q is not None:
                return [(expr, ctx)] if opaque else []
            funcs = self.function_of(f, ctx)
            if not funcs and opaque:
                return [(expr, ctx)]
            for func in funcs:
                for value, vctx in func.returns:
                    if type(value) is ast.Name:
                        bindings = self.read_bindings(value, vctx)
                        if bindings and any(kind == "param" and target is func for _, kind, target, _ in bindings):
                            arg = self.argument_for(expr, ctx, func, value.id)
                            if isinstance(arg, ast.AST):
                                out.extend(self._sources(arg, ctx, depth + 1, opaque))
                            continue
                    out.extend(self._sources(value, vctx, depth + 1, opaque))
            return out
        if t is ast.Name:
            bindings = self.read_bindings(expr, ctx) or ()
            if len(bindings) == 1 and bindings[0][1] == "param" and bindings[0][2] is not None \
                    and ctx.func is bindings[0][2]:  # the shared answer (step_loaders skips one seen)
                return self._param_loader_sources(ctx.func, expr.id, depth, opaque)
            for _, kind, target, b_ctx in bindings:
                if kind == "value" and b_ctx is not None:
                    out.extend(self._sources(target, b_ctx, depth + 1, opaque))
                elif kind == "item" and b_ctx is not None:
                    item = self._tuple_item(target[0], target[1], b_ctx, depth)
                    if item:
                        out.extend(self._sources(item[0], item[1], depth + 1, opaque))
                elif kind == "param" and target is not None and ctx.func is target:
                    out.extend(self._param_loader_sources(target, expr.id, depth, opaque))
            return out
        if t is ast.Attribute:
            for v, c in self.values(expr, ctx) or ():
                if v is not None and c is not None:
                    out.extend(self._sources(v, c, depth + 1, opaque))
        return out

    def _param_loader_sources(self, func: FunctionInfo, name: str, depth: int, opaque: bool = False) -> list:
        """:meth:`loader_sources` of what every call of ``func`` passes for ``name``, once per
        (function, parameter, depth) however many loops iterate the parameter."""
        key = ("lsrc_param", id(func), name, depth, opaque)
        cache = self._cache
        found = cache.get(key)
        if found is None:
            cache[key] = []  # cycles add nothing
            found = []
            for arg, _, cctx in self.passed_arguments(func, name):
                if isinstance(arg, ast.AST):
                    found.extend(self._sources(arg, cctx, depth + 1, opaque))
            cache[key] = found
        return found

    def step_loader_origins(self) -> set[int]:
        """ids of the calls (:meth:`loader_origins`) that the step loops of XLA code draw
        their batches from and the module cannot see into (once per module)."""
        found = self._cache.get("step_origins")
        if found is None:
            found = self._cache["step_origins"] = set()
            for loop in self.loops if self.may_step() else ():
                if self.in_xla_code(loop.ctx) and self.is_step_loop(loop):
                    for e in self.loop_iterables(loop):
                        found.update(id(c) for c, _ in self.loader_origins(e, loop.ctx))
        return found

    def step_loaders(self) -> list[tuple[ast.Call, Ctx]]:
        """``DataLoader(...)`` calls (in source order, each once) feeding a training step
        loop in XLA code."""
        if "step_loaders" in self._cache:
            return self._cache["step_loaders"]
        seen: dict[int, tuple] = {}
        followed: set[int] = set()  # ids of loader_sources answers (cached: alive, so ids stay unique)
        for loop in self.loops if self.may_step() else ():
            if not self.in_xla_code(loop.ctx) or not self.is_step_loop(loop):
                continue
            for e in self.loop_iterables(loop):
                sources = self.loader_sources(e, loop.ctx)
                if id(sources) in followed:
                    continue  # another loop over the same parameter: the same list
                followed.add(id(sources))
                for call, c in sources:
                    seen.setdefault(id(call), (call, c))
        for call, c in self._project_step_loaders():
            seen.setdefault(id(call), (call, c))
        out = sorted(seen.values(), key=lambda p: (p[0].lineno, p[0].col_offset))
        self._cache["step_loaders"] = out
        return out

    def _project_step_loaders(self) -> list:
        """Project mode: the ``DataLoader(...)`` calls a module-level function returns when a
        call of it in another project module feeds a training step loop there
        (:attr:`~flake8_xla.project.callers.CallFacts.feeds_step`)."""
        lookup = self.project_callers
        if lookup is None:
            return []
        out = []
        quals = None
        for func in self.functions:
            if func.cls is not None or func.ctx is None or func.ctx.func is not None or not func.returns:
                continue
            loaders = [pair for value, vctx in func.returns if vctx is not None
                       for pair in self.loader_sources(value, vctx)]
            if not loaders:
                continue
            quals = quals or self.function_quals()
            try:
                calls = lookup(quals[id(func)], partial=True)  # one caller that trains on it is enough
            except (Exception, RecursionError):  # a project that cannot be read: unknown
                calls = None
            if calls and any(cf.feeds_step for cf in calls):
                out.extend(loaders)
        return out

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
        backward before the sync and no optimizer step between them (``"backward"``), or a
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

    def _cut_after_step(self, sync, sctx, loop) -> bool:
        """Another sync follows the last optimizer step of the loop body (or the loop syncs by
        itself through a device loader): the extra one can simply go."""
        if any(self.loader_kind(e, loop.ctx) == "device" for e in self.loop_iterables(loop)):
            return True
        _, steps, _, _ = self._cache[("step_events", id(loop))]
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
            steps = [(c, x) for c, x in direct if self.is_optimizer_step(c, x)
                     or self.call_name(c, x) == self.OPTIMIZER_STEP]
            # any `.step()` (optD.step(), a scheduler) ends a step for the "no step between" tests
            any_steps = steps + [(c, x) for c, x in direct if type(c.func) is ast.Attribute and c.func.attr == "step"]
            backwards = [(c, x) for c, x in direct if self.is_backward(c, x)]
            events = self._cache[key] = (direct, steps, any_steps, backwards)
        direct, steps, any_steps, backwards = events
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
            for b, bx in backwards:
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

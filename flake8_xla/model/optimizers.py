"""The optimizer and its module: which optimizer constructor a name holds (through names,
``self.`` attributes, helpers' returns and a function parameter the module's callers
fill), which modules' parameters an optimizer was built over (``SGD(model.parameters())``),
whether such a module is wrapped in DDP or XLA FSDP (``model = DDP(model)``, or
``DDP(model)`` next to an optimizer over ``model.parameters()``), whether a step loop
draws from a device loader (also through a parameter every caller fills with one), and
the module's model constructions and per-rank values.

What cannot be seen is unknown (``None``), and unknown never fires.
"""

from __future__ import annotations

import ast
import bisect

from .scopes import Ctx, FunctionInfo, LoopInfo, _expr_key

#: wrappers whose module reduces its gradients itself, by kind
WRAPPERS = {
    "ddp": ("torch.nn.parallel.DistributedDataParallel",),
    "fsdp": ("torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",),
}
#: optimizer constructors whose first argument is the parameters they update
OPTIMIZER_PREFIXES = ("torch.optim.", "torch_xla.amp.syncfree.")
#: methods of a module that move or cast it and return the module itself
_SELF_RETURNING = ("to", "cuda", "cpu", "train", "float", "half", "bfloat16", "double", "requires_grad_")


class Optimizers:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    # -- optimizers ------------------------------------------------------------------------

    def optimizer_constructions(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> list | None:
        """The ``torch.optim.X(...)`` / ``syncfree.X(...)`` calls ``expr`` may hold, as
        ``(call, ctx)``; None when any value cannot be seen or is not such a constructor.
        A parameter of a module function is what every caller in the module passes."""
        if _depth > 4:
            return None
        key = ("optcons", id(expr))
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = None  # cycles: unknown
        out = self._optimizer_constructions(expr, ctx, _depth)
        self._cache[key] = out
        return out

    def _optimizer_constructions(self, expr, ctx, depth):
        if type(expr) is ast.Name:
            args = self.parameter_arguments(expr, ctx)
            if args is not None:
                # one answer per (function, parameter, depth): every use of the parameter
                # gets the same list (callers that iterate it may skip a list seen before)
                key = ("optcons_param", id(args), depth)
                if key not in self._cache:
                    self._cache[key] = None  # cycles: unknown
                    self._cache[key] = self._constructions_passed(args, depth)
                return self._cache[key]
        values = self.resolve_values(expr, ctx)
        if not values:
            return None
        out = []
        for v, c in values:
            if type(v) is not ast.Call or not self.is_optimizer_constructor(v, c):
                return None
            out.append((v, c))
        return out

    def _constructions_passed(self, args, depth):
        out = []
        for arg, actx in args:
            found = self.optimizer_constructions(arg, actx, depth + 1)
            if not found:
                return None
            out.extend(found)
        return out or None

    def is_optimizer_constructor(self, call: ast.Call, ctx: Ctx) -> bool:
        q = self.call_name(call, ctx)
        return q is not None and q.startswith(OPTIMIZER_PREFIXES) and not q.startswith("torch.optim.lr_scheduler") \
            and q.rsplit(".", 1)[-1][:1].isupper()

    def parameter_arguments(self, name: ast.Name, ctx: Ctx) -> list | None:
        """For a name bound only as a parameter of a module function: the argument each call
        of that function in the module passes for it (``(expr, ctx)``); None when it is not a
        parameter, nothing calls the function, or a call's argument cannot be told."""
        bindings = self.lookup(name.id, ctx, getattr(name, "lineno", None))
        if not bindings or any(kind != "param" for _, kind, _, _ in bindings):
            return None
        func = bindings[0][2]
        if not isinstance(func, FunctionInfo) or name.id not in func.params:
            return None
        return self.param_arguments(func, name.id)  # one list per (function, parameter)

    def optimizer_modules(self, call: ast.Call, ctx: Ctx) -> list | None:
        """The modules whose parameters an optimizer constructor is given: the receivers of
        ``.parameters()`` / ``.named_parameters()`` in its ``params`` argument (also in
        param-group dicts, ``filter``/``list`` around them and through names), as
        ``(expr, ctx)``; None when they cannot be seen."""
        params = self.kwarg(call, "params", 0)
        if not isinstance(params, ast.AST):
            return None
        out = []
        todo = [(params, ctx, 0)]
        budget = 64
        while todo:
            expr, c, depth = todo.pop()
            for node in ast.walk(expr):
                budget -= 1
                if budget < 0:
                    return None
                if type(node) is ast.Call and type(node.func) is ast.Attribute \
                        and node.func.attr in ("parameters", "named_parameters"):
                    out.append((node.func.value, c))
                elif type(node) is ast.Name and depth < 4 and type(node.ctx) is ast.Load:
                    if node is expr:
                        for v, vc in self.values(node, c) or ():
                            if v is not None and vc is not None:
                                todo.append((v, vc, depth + 1))
                        # groups = []; groups.append({"params": [p], ...}) before the optimizer
                        for grown, gctx in self._grown_list(node, c, call.lineno):
                            todo.append((grown, gctx, depth + 1))
                    found = self.loop_source(node, c)
                    if found is not None:  # p of `for n, p in model.named_parameters()`
                        todo.append((found[1], found[2], depth + 1))
        return out or None

    def _grown_list(self, name: ast.Name, ctx: Ctx, line: int) -> list:
        """The arguments of ``name.append(x)`` / ``name.extend(x)`` / ``name += x`` calls in
        ``ctx``'s scope before ``line``, when ``name`` is bound there only to list displays."""
        bindings = self.lookup(name.id, ctx, getattr(name, "lineno", None))
        if not bindings or any(kind != "value" or type(v) is not ast.List for _, kind, v, _ in bindings):
            return []
        out = []
        for method in ("append", "extend"):
            for call, c in self.attr_calls.get(method, ()):
                f = call.func
                if type(f.value) is ast.Name and f.value.id == name.id and c.scope is ctx.scope \
                        and call.lineno < line and len(call.args) == 1:
                    out.append((call.args[0], c))
        return out

    def loop_source(self, name: ast.Name, ctx: Ctx):
        """For a name bound only as the target of a ``for`` loop or a comprehension:
        ``(target, iterable, ctx of the iterable)`` (``for n, p in model.named_parameters()``
        gives the ``(n, p)`` tuple and the call); None otherwise."""
        bindings = self.lookup(name.id, ctx, getattr(name, "lineno", None))
        if not bindings or len(bindings) != 1 or bindings[0][1] != "unknown" or bindings[0][3] is None:
            return None
        line, _, _, bctx = bindings[0]
        scope = bctx.scope
        if scope.kind == "comprehension":
            outer = scope.parent
            while outer is not None and outer.kind == "comprehension":
                outer = outer.parent
            if outer is None:
                return None
            where = Ctx(outer, bctx.func, (), ())
            pairs = [(g.target, g.iter) for g in getattr(scope.node, "generators", ())]
        else:
            where = bctx
            index = self._cache.get("for_loops_by_scope")
            if index is None:
                index = self._cache["for_loops_by_scope"] = {}
                for lp in self.loops:
                    if type(lp.node) in (ast.For, ast.AsyncFor):
                        index.setdefault((id(lp.ctx.scope), lp.node.target.lineno), []).append(lp)
            pairs = [(lp.node.target, lp.node.iter) for lp in index.get((id(scope), line), ())]
        for target, it in pairs:
            names = [target] if type(target) is ast.Name else \
                [e for e in target.elts if type(e) is ast.Name] if type(target) in (ast.Tuple, ast.List) else []
            if any(n.id == name.id for n in names):
                return target, it, where
        return None

    # -- wrappers --------------------------------------------------------------------------

    def wrap_calls(self, kind: str) -> list[tuple[ast.Call, Ctx]]:
        """The ``DDP(...)`` (``kind="ddp"``) or XLA ``FSDP(...)`` (``"fsdp"``) calls in XLA code."""
        key = ("wrapcalls", kind)
        if key not in self._cache:
            self._cache[key] = [(c, x) for c, x in self.calls_to(*WRAPPERS[kind]) if self.in_xla_code(x)]
        return self._cache[key]

    def module_wraps(self, module: ast.AST, ctx: Ctx, kind: str) -> list | None:
        """The wrap calls of ``kind`` around the module ``module`` holds: a value of it that is
        a wrap call (``model = DDP(model)``; ``ddp.module`` is the wrapped module), or a wrap
        call given the same module (``ddp = DDP(model)`` with ``model`` bound the same way).
        Empty when its values are all seen and none is wrapped; None when unknown."""
        found = []
        expr = module
        if type(expr) is ast.Attribute and expr.attr == "module":
            expr = expr.value  # ddp_model.module: the module DDP wraps
        values = self._module_values(expr, ctx)
        for v, c in values or ():
            if type(v) is ast.Call and c is not None and self.in_xla_code(c) and (
                    self.wrapper_name(v, c) in WRAPPERS[kind] or self._helper_wraps(v, c) == kind):
                found.append((v, c))  # (a project helper's call stands for the wrap it returns)
        root = _root_node(expr)
        if root is not None:
            mine = self.read_bindings(root, ctx)
            for call, cctx in self._wraps_by_module(kind).get(_expr_key(expr), ()):
                inner = _root_node(_strip_moves(self.kwarg(call, "module", 0)))
                if (call, cctx) not in found and inner is not None and mine \
                        and self.read_bindings(inner, cctx) == mine:
                    found.append((call, cctx))
        if found:
            return found
        return [] if values else None

    def returned_wrap(self, func: FunctionInfo) -> str:
        """``"ddp"`` / ``"fsdp"`` when every ``return`` of ``func`` gives a module wrapped by
        that kind (``return FSDP(model.to(device), ...)``, a name bound to one, a module
        helper's return: :meth:`_module_values`), else ``""``; what project mode tells other
        modules of a helper (``HelperFacts.returns_wrap``). Whether the code is XLA code is
        the caller's question."""
        if not func.returns:
            return ""
        kinds = set()
        for value, vctx in func.returns:
            values = self._module_values(value, vctx) if value is not None and vctx is not None else None
            if not values:
                return ""
            for v, c in values:
                name = self.wrapper_name(v, c) if type(v) is ast.Call and c is not None else None
                kind = next((k for k, names in WRAPPERS.items() if name in names), None)
                if kind is None:
                    return ""
                kinds.add(kind)
        return kinds.pop() if len(kinds) == 1 else ""

    def _helper_wraps(self, call: ast.Call, ctx: Ctx) -> str:
        """Project mode: ``call`` runs a function of another project module whose every return
        is a module wrapped by DDP / XLA FSDP (``HelperFacts.returns_wrap``), else ``""``."""
        if self.project_lookup is None:
            return ""
        return self.callee_agree(call, ctx, "returns_wrap") or ""

    def wrapper_name(self, call: ast.Call, ctx: Ctx) -> str | None:
        """The qualified callee of ``call``, seeing through a name bound to a wrapper with
        its options fixed: ``fsdp = functools.partial(FSDP, ...)``, ``fsdp_wrap = lambda m:
        FSDP(m, ...)``."""
        q = self.call_name(call, ctx)
        if q is not None or type(call.func) is not ast.Name:
            return q
        single = self.single_value(call.func, ctx)
        if single is None:
            return None
        v, vctx = single
        if type(v) is ast.Lambda and type(v.body) is ast.Call:
            return self.call_name(v.body, vctx)
        if type(v) is ast.Call and self.call_name(v, vctx) == "functools.partial" and v.args:
            return self.qualname(v.args[0], vctx)
        return None

    def _wraps_by_module(self, kind: str) -> dict:
        """The wrap calls of ``kind`` indexed by the structural key of the module they are
        given (``DDP(model.to(dev))`` under ``model``; in project mode also a call of project
        functions that all return their first argument wrapped: ``strategy.wrap_model(model)``,
        :meth:`callee_agree`), built once."""
        key = ("wrapsby", kind)
        table = self._cache.get(key)
        if table is None:
            table = self._cache[key] = {}
            for call, cctx in self.wrap_calls(kind):
                inner = self.kwarg(call, "module", 0)
                if isinstance(inner, ast.AST):
                    table.setdefault(_expr_key(_strip_moves(inner)), []).append((call, cctx))
            if self.project_lookup is not None:  # model = strategy.wrap_model(model): a project wrap
                for call, cctx in self.calls:
                    if call.args and type(call.args[0]) is not ast.Starred and self.call_name(call, cctx) is None \
                            and self.in_xla_code(cctx) and self._helper_call(call, cctx) \
                            and self.callee_agree(call, cctx, "returns_wrap") == kind:
                        table.setdefault(_expr_key(_strip_moves(call.args[0])), []).append((call, cctx))
        return table

    def _module_values(self, expr, ctx) -> list | None:
        """What a module expression holds, through names, ``self.`` attributes, helpers'
        returns and ``.to(device)``-style calls returning the module itself."""
        out = []
        todo = [(expr, ctx, 0)]
        while todo:
            e, c, depth = todo.pop()
            if depth > 8 or len(out) > 16:
                return None
            if type(e) is ast.Call and type(e.func) is ast.Attribute and e.func.attr in _SELF_RETURNING \
                    and self.call_name(e, c) is None:
                todo.append((e.func.value, c, depth + 1))
                continue
            if type(e) is ast.Call and type(e.func) is ast.Name and self.wrapper_name(e, c) is None:
                funcs = self.function_of(e.func, c)  # build_model(cfg): what the helper returns
                if len(funcs) == 1 and funcs[0].returns and not funcs[0].node.decorator_list:
                    todo.extend((v, vc, depth + 1) for v, vc in funcs[0].returns)
                    continue
            if type(e) in (ast.Name, ast.Attribute) and self.qualname(e, c) is None:
                vals = self.resolve_values(e, c)
                if not vals and type(e) is ast.Name:
                    vals = self.parameter_arguments(e, c)  # fit(model, ...): what the callers pass
                if not vals:
                    return None
                for v, vc in vals:
                    if v is e:
                        return None
                    todo.append((v, vc, depth + 1))
                continue
            out.append((e, c))
        return out

    def optimizer_wraps(self, opt: ast.AST, ctx: Ctx, kind: str) -> list | None:
        """The wrap calls of ``kind`` around the modules whose parameters the optimizer in
        ``opt`` updates; empty when every module is seen unwrapped, None when unknown."""
        cons = self.optimizer_constructions(opt, ctx)
        if not cons:
            return None
        # the answer depends on the constructions only: once per list (every use of an
        # optimizer parameter shares its list, see optimizer_constructions)
        key = ("optwraps", id(cons), kind)
        if key not in self._cache:
            self._cache[key] = self._construction_wraps(cons, kind)
        return self._cache[key]

    def _construction_wraps(self, cons: list, kind: str) -> list | None:
        out = []
        for call, cctx in cons:
            modules = self.optimizer_modules(call, cctx)
            if not modules:
                return None
            for m, mctx in modules:
                wraps = self.module_wraps(m, mctx, kind)
                if wraps is None:
                    return None
                out.extend(w for w in wraps if w not in out)
        return out

    # -- loops over device loaders -----------------------------------------------------------

    def iterates_device_loader(self, loop: LoopInfo) -> bool:
        """The loop iterates an ``MpDeviceLoader`` / ``per_device_loader`` (which syncs at
        every batch): directly, through names and helpers, or through a parameter that
        every call of its function fills with one: in the module and, in project mode, in
        the other project modules (union: all of them must)."""
        node = loop.node
        if type(node) not in (ast.For, ast.AsyncFor):
            return False
        return self._device_kind(node.iter, loop.ctx, 0)

    def _device_kind(self, expr, ctx, depth) -> bool:
        kind = self.loader_kind(expr, ctx)
        if kind == "device":
            return True
        if type(kind) is not tuple or depth > 4:
            return False
        _, func, name = kind
        key = ("device_param", id(func), name, depth)  # once per parameter, not per loop over it
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle of calls: not seen
            passed = self.passed_arguments(func, name)
            others = self.project_arguments(func, name)  # the calls in other project modules (params.py)
            found = self._cache[key] = others is not None and bool(passed or others) and all(
                isinstance(arg, ast.AST) and self._device_kind(arg, cctx, depth + 1) for arg, _, cctx in passed) \
                and all(a.kind == "device_loader" for a in others)
        return found

    # -- what a launched replica builds --------------------------------------------------------

    def builds_model(self, call: ast.Call, ctx: Ctx) -> bool:
        """A call that builds a module: a ``torch.nn`` layer, a module class of this file, a
        torchvision / timm / transformers model, or a module function that does (followed
        :attr:`HELPER_DEPTH` levels)."""
        if self._model_value(call, ctx):
            return True
        if self.call_name(call, ctx) is not None:
            return self._used_as_module(call, ctx)
        table = self._cache.get("builds_model")
        if table is None:
            direct = {id(f): any(self._model_value(c, x) for c, x in f.calls) for f in self.functions}
            table = self.closure_over_callers("builds_model", direct)
        if any(table.get(id(f)) for f in self.function_of(call.func, ctx)):
            return True
        return self._used_as_module(call, ctx)

    #: methods only a module has (tensors and optimizers have none of them)
    _MODULE_METHODS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "train", "eval",
                                 "apply", "named_children", "children"})

    def _used_as_module(self, call: ast.Call, ctx: Ctx) -> bool:
        """A call of an imported class (``GPT(config)`` from the project's ``model.py``, also
        moved: ``GPT(config).to(dev)``) bound to a name of the same function that is later
        used as a module: ``.parameters()``, ``.train()``, ... (``.to(device)`` too for a
        capitalised class name). Not a module built elsewhere and moved here
        (``WRAPPED.to(device)``), a method's result, or ``from_pretrained`` (loaded weights)."""
        func = ctx.func
        if func is None or func.scope is None:
            return False
        base = _strip_moves(call)  # GPT(config).to(device): GPT(config) builds it
        if type(base) is not ast.Call:
            return False  # WRAPPED.to(device): moves a module built elsewhere (MpModelWrapper)
        f = base.func
        q = self.call_name(base, ctx)
        if type(f) is not ast.Name and q is None:
            return False  # builder.build(cfg), self.make(): what a method returns is unknown
        if q is not None and (q.split(".", 1)[0] in ("torch", "torch_xla") or q.endswith("from_pretrained")):
            return False  # torch's own modules are _model_value's; from_pretrained loads weights
        ident = f.id if type(f) is ast.Name else f.attr
        bound, uses = self._module_uses(func)
        for name in bound.get(id(call), ()):
            last_module, last_move = uses.get(name, (0, 0))
            if last_module >= call.lineno or (ident[:1].isupper() and last_move >= call.lineno):
                return True
        return False

    def _module_uses(self, func: FunctionInfo) -> tuple[dict, dict]:
        """Once per function: ``id(value call) -> names bound to it`` and ``name -> (last
        line of a module-only method call on it, last line of a .to()/.cuda() on it)``."""
        key = ("moduleuses", id(func))
        found = self._cache.get(key)
        if found is None:
            bound: dict[int, list] = {}
            for name, entries in func.scope.bindings.items():
                for _, kind, target, _ in entries:
                    if kind == "value" and type(target) is ast.Call:
                        bound.setdefault(id(target), []).append(name)
            uses: dict[str, tuple[int, int]] = {}
            for c, x in func.calls:
                g = c.func
                if x.func is func and type(g) is ast.Attribute and type(g.value) is ast.Name:
                    module, move = uses.get(g.value.id, (0, 0))
                    if g.attr in self._MODULE_METHODS:
                        module = max(module, c.lineno)
                    elif g.attr in ("to", "cuda"):
                        move = max(move, c.lineno)
                    uses[g.value.id] = (module, move)
            found = self._cache[key] = (bound, uses)
        return found

    def classes_on_device(self) -> set[int]:
        """ids of the module classes whose instances are moved in XLA code (``Net().to(dev)``,
        ``model = Net(); model.to(dev)``, ``.cuda()``; not ``.to("cpu")``), and of the classes
        such a class instantiates in its methods (its submodules), built once."""
        if "classes_on_device" in self._cache:
            return self._cache["classes_on_device"]
        found: set[int] = set()
        todo = []
        for call, ctx in self.method_calls("to", "cuda"):  # (a set: the order does not matter)
            f = call.func
            if not self.in_xla_code(ctx) or self._to_cpu(call, ctx):
                continue
            receiver = f.value
            if type(receiver) is ast.Call:
                sources = [(receiver, ctx)]
            elif type(receiver) is ast.Name:
                sources = [(v, c) for v, c in self.values(receiver, ctx) or () if type(v) is ast.Call and c is not None]
            else:
                continue
            for v, c in sources:
                v = _strip_moves(v)
                if type(v) is ast.Call and type(v.func) is ast.Name:
                    cls = self.class_named(v.func.id, c)
                    if cls is not None and id(cls) not in found:
                        found.add(id(cls))
                        todo.append(cls)
        while todo:  # submodules: classes an on-device class instantiates
            cls = todo.pop()
            for c in self.mro(cls):
                for method in c.methods.values():
                    for call, ctx in method.calls:
                        if type(call.func) is ast.Name:
                            sub = self.class_named(call.func.id, ctx)
                            if sub is not None and id(sub) not in found:
                                found.add(id(sub))
                                todo.append(sub)
        self._cache["classes_on_device"] = found
        return found

    def calls_after(self, func: FunctionInfo | None, key: str, pred, pos: tuple[int, int], limit: int = 32) -> list:
        """Up to ``limit`` calls of ``func`` (its own body; module level for None) that come
        after ``pos`` and satisfy ``pred(call, ctx)``, in source order. The matching calls
        are listed once per function and ``key``, so asking after many positions stays linear."""
        cache_key = ("after", key, id(func))
        table = self._cache.get(cache_key)
        if table is None:
            calls = func.calls if func is not None else self.calls
            table = sorted(((c.lineno, c.col_offset), i, c, x) for i, (c, x) in enumerate(calls)
                           if x.func is func and pred(c, x))
            self._cache[cache_key] = table
        start = bisect.bisect_right(table, (pos, len(table) + 1 << 40))
        return [(c, x) for _, _, c, x in table[start:start + limit]]

    def calls_before(self, func: FunctionInfo | None, key: str, pred, pos: tuple[int, int], limit: int = 32) -> list:
        """Like :meth:`calls_after`, the nearest ``limit`` matching calls before ``pos``."""
        self.calls_after(func, key, pred, pos, 0)
        table = self._cache[("after", key, id(func))]
        end = bisect.bisect_left(table, (pos, -1))
        return [(c, x) for _, _, c, x in table[max(0, end - limit):end]]

    def reachable_from(self, func: FunctionInfo) -> set[int]:
        """:meth:`reachable` from one function, memoised."""
        key = ("reachfrom", id(func))
        if key not in self._cache:
            self._cache[key] = self.reachable([func])
        return self._cache[key]


def _root_node(expr) -> ast.Name | None:
    while type(expr) is ast.Attribute:
        expr = expr.value
    return expr if type(expr) is ast.Name else None


def _strip_moves(expr):
    """``model.to(device)`` -> ``model`` (a move returns the module itself)."""
    for _ in range(8):
        if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in _SELF_RETURNING:
            expr = expr.func.value
        else:
            break
    return expr

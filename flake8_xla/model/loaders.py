"""Loaders: what a step loop draws its batches from (a plain DataLoader, a device loader,
a parameter a caller fills), the ``DataLoader(...)`` calls that feed a step loop, the
parameters unsynced step loops iterate unwrapped, and whether a loop's data can be seen at
all (``range(n)``, tensors, ``xu.SampleGenerator``).
"""

from __future__ import annotations

import ast

from .scopes import Ctx, FunctionInfo, LoopInfo


def runs_once(node) -> bool:
    """The loop ``node`` visibly runs its body at most once: a ``break`` / ``return`` among its
    own statements, ``for _ in range(1)`` (or ``range(a, a + 1)`` of literals), or over a list
    or tuple display of at most one item."""
    if any(type(s) in (ast.Break, ast.Return) for s in node.body):
        return True
    if type(node) in (ast.For, ast.AsyncFor):
        it = node.iter
        if type(it) in (ast.List, ast.Tuple) and len(it.elts) <= 1:
            return True
        if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "range" and not it.keywords:
            args = it.args
            consts = [a.value if type(a) is ast.Constant else None for a in args]
            if len(args) == 1 and type(consts[0]) is int and consts[0] <= 1:
                return True
            if len(args) == 2 and all(type(c) is int for c in consts) and consts[1] - consts[0] <= 1:
                return True
    return False



def origin_items(pairs) -> dict[int, frozenset]:
    """``{id(call): items}`` of the origins in ``pairs`` (what :meth:`Loaders.loader_origins`
    gives) that are reached only through items of what the call returns (its second element
    ``("item", index)``); an origin reached whole is not listed."""
    items: dict[int, set] = {}
    whole: set[int] = set()
    for c, x in pairs:
        if type(x) is tuple and len(x) == 2 and x[0] == "item":
            items.setdefault(id(c), set()).add(x[1])
        else:
            whole.add(id(c))
    return {k: frozenset(v) for k, v in items.items() if k not in whole}

class Loaders:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

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
            helper = self.project_helper(f, ctx, single=True)  # make_loader(...) of another project module
            if helper is not None and helper.returns_loader:  # (before call_name: a relative import has none)
                return helper.returns_loader
            if helper is None and type(f) is ast.Attribute and self.project_lookup is not None:
                kind = self.callee_agree(expr, ctx, "returns_loader")  # backend.make_loader(...): every class's
                if kind is not None:
                    return kind
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

    def loader_kind_through_params(self, expr: ast.AST, ctx: Ctx) -> str | tuple | None:
        """:meth:`loader_kind`, where a parameter (``("param", func, name)``) is resolved to
        ``"plain"`` when every call of its function passes a plain ``DataLoader`` (or a
        parameter of its own caller that does, up to 4 levels; a caller in another project
        module passes a ``plain_loader``): ``validate(model, loader)`` called with a
        ``DataLoader`` draws from it. Anything else stays as :meth:`loader_kind` says."""
        kind = self.loader_kind(expr, ctx)
        if type(kind) is tuple and self._param_plain_loader(kind[1], kind[2], 0):
            return "plain"
        return kind

    def _param_plain_loader(self, func: FunctionInfo, name: str, depth: int) -> bool:
        key = ("param_plain_loader", id(func), name)
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle of calls: unknown

            def local(arg, actx, call):
                kind = self.loader_kind(arg, actx)
                if type(kind) is tuple:
                    return depth < 4 and self._param_plain_loader(kind[1], kind[2], depth + 1)
                return kind == "plain"

            found = self._cache[key] = self.every_caller_passes(func, name, local, "plain_loader")
        return found

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
            if not self.is_step_loop(loop) or self.loop_syncs(loop, every_step=True):
                continue  # (a sync under `if step % N == 0:` leaves N-1 steps unsynced)
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

    SAMPLE_GENERATORS = ("torch_xla.utils.utils.SampleGenerator",)

    _KNOWN_BUILTINS = ("enumerate", "zip", "reversed", "iter", "sorted", "list", "tuple")

    def iterable_seen(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
        """True when ``expr`` visibly yields no device loader and no torch DataLoader:
        ``range(n)``, literals, comprehensions over such, tensors from ``torch.*`` calls,
        ``xu.SampleGenerator``, through names, ``self.`` attributes, builtin and
        ``itertools`` / ``tqdm`` wrappers and module helpers' returns, and a parameter of a
        module function every caller in the module fills with such (no caller in another
        project module). Another parameter, an imported helper's result, a loop target or
        anything unseen is False (it may be an ``MpDeviceLoader``). Memoised per node,
        bounded to 8 levels."""
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
            if len(bindings) == 1 and bindings[0][1] == "param" and bindings[0][2] is not None \
                    and bindings[0][2] is ctx.func:  # every caller in the module passes a seen iterable
                key = ("seen_param", id(ctx.func), expr.id)
                found = self._cache.get(key)
                if found is None:
                    self._cache[key] = False  # a cycle of calls: unknown
                    found = self._cache[key] = self.every_caller_passes(
                        ctx.func, expr.id, lambda a, c, call: self.iterable_seen(a, c, depth + 1), "seen_iterable")
                return found
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
        if helper is not None:  # (that may cut the graph between its batches: not seen)
            return helper.yields_seen and not helper.may_sync
        if q is not None:
            return False
        funcs = self.function_of(f, ctx)
        if funcs:
            return len(funcs) == 1 and bool(funcs[0].returns) and all(
                self.iterable_seen(v, c, depth + 1) for v, c in funcs[0].returns)
        if type(f) is ast.Attribute:  # x.split(4), t.chunk(2): what the receiver holds
            return self.iterable_seen(f.value, ctx, depth + 1)
        return False

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
            funcs = self.function_of(f, ctx) if q is None else ()
            if not funcs:
                passed = self._passed_through(expr, ctx)  # strategy.device_loader(loader)
                if passed is not None:
                    out = self._sources(passed, ctx, depth + 1, opaque)
                return out + [(expr, ctx)] if opaque else out
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
                    elif opaque and type(target[0]) is ast.Call and type(target[1]) is int:
                        # an item of what an unseen call returns (`train, val = build_loaders()`):
                        # the origin is that call, marked with the item (:func:`origin_items`)
                        out.extend((c, ("item", target[1])) if c is target[0] else (c, x)
                                   for c, x in self._sources(target[0], b_ctx, depth + 1, True))
                elif kind == "param" and target is not None and ctx.func is target:
                    out.extend(self._param_loader_sources(target, expr.id, depth, opaque))
            return out
        if t is ast.Attribute:
            for v, c in self.values(expr, ctx) or ():
                if v is not None and c is not None:
                    out.extend(self._sources(v, c, depth + 1, opaque))
        elif t is ast.Subscript and opaque and type(expr.value) is ast.Name:
            key = self.const(expr.slice, ctx)  # loaders["train"] of what an unseen call returns
            if type(key) in (str, int) and not isinstance(key, bool):
                out.extend((c, ("item", key)) for c, x in self._sources(expr.value, ctx, depth + 1, True)
                           if type(c) is ast.Call and type(x) is not tuple)
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

    def reiterated_calls(self) -> set[int]:
        """ids of the calls whose result a ``for`` loop iterates once per pass of an enclosing
        loop that does not hold the call (``loader = self.wrap_loader(dl)`` before ``for
        epoch in ...: for batch in loader:``): followed from the loop's iterable through
        pass-through wrappers (``enumerate``, ``tqdm``, ``islice``) and names bound once in
        their function, to a call the module cannot see the value of (an imported function,
        a method on ``self`` an override may replace, a name bound to nothing here; project
        mode keeps those of project functions). An enclosing loop that visibly runs once
        (:func:`runs_once`) does not count. A one-shot iterable built there is spent after the
        first pass (XLA306 across modules). Once per module, linear in its loops."""
        found = self._cache.get("reiterated")
        if found is None:
            found = self._cache["reiterated"] = set()
            for loop in self.loops:
                if type(loop.node) not in (ast.For, ast.AsyncFor) or not loop.ctx.loops:
                    continue
                site = self._iterated_call(loop.node.iter, loop.ctx, 0)
                if site is None:
                    continue
                call, cctx = site
                if any(o not in cctx.loops and not runs_once(o.node) for o in loop.ctx.loops):
                    found.add(id(call))
        return found

    def iterating_loops(self) -> dict:
        """``{id(call): loop}``: the ``for`` loop that iterates the result of each opaque call
        (:meth:`_iterated_call`: through ``enumerate``/``tqdm``, names bound once), whatever
        encloses it (``for batch in self.train_dataloader():`` in a base class's loop, where
        an override in another module returns the loader). Once per module, linear in its loops."""
        found = self._cache.get("iterating")
        if found is None:
            found = self._cache["iterating"] = {}
            for loop in self.loops:
                if type(loop.node) in (ast.For, ast.AsyncFor):
                    site = self._iterated_call(loop.node.iter, loop.ctx, 0)
                    if site is not None:
                        found.setdefault(id(site[0]), loop)
        return found

    def _iterated_call(self, expr: ast.AST, ctx: Ctx, depth: int):
        """``(call, ctx)`` of the one opaque call ``expr`` draws from (:meth:`reiterated_calls`), or None."""
        while depth <= 8:
            depth += 1
            t = type(expr)
            if t is ast.Name:
                if len(self.lookup(expr.id, ctx, None) or ()) != 1:
                    return None  # bound more than once (or not here): what it holds per pass is unknown
                single = self.single_value(expr, ctx)
                if single is None:
                    return None
                expr, ctx = single
                continue
            if t is not ast.Call:
                return None
            q = self.call_name(expr, ctx)
            inner = self._wrapped_iterables(expr, ctx, q)
            if inner is not None:
                if len(inner) != 1:
                    return None
                expr = inner[0]
                continue
            f = expr.func
            if type(f) is ast.Attribute and type(f.value) is ast.Name and ctx.func is not None \
                    and ctx.func.cls is not None and ctx.func.params and f.value.id == ctx.func.params[0]:
                return expr, ctx  # self.m(...): an override elsewhere may run
            return (expr, ctx) if not self.function_of(f, ctx) else None
        return None

    def project_reiterated(self, func: FunctionInfo) -> bool:
        """Project mode: a call of ``func`` in another project module (or a base class's
        ``self.m(...)`` there on an object of this class) hands its result to a loop that
        iterates it once per pass of an enclosing loop (:meth:`reiterated_calls`)."""
        lookup = self.project_callers
        qual = self.function_quals().get(id(func)) if lookup is not None else None
        if qual is None or qual.count(".") > 1:
            return False
        try:
            return bool(lookup(qual, partial=True, reiterated=True))
        except (Exception, RecursionError):  # a project that cannot be read: unknown
            return False

    def step_loader_origin_items(self, any_code: bool = False) -> dict[int, frozenset]:
        """``{id(call): items}`` for the :meth:`step_loader_origins` the step loops reach only
        through items of what they return (``train_loader, val_loader = build_loaders(cfg)``:
        ``{0}``); a call reached whole is not listed."""
        self.step_loader_origins(any_code)
        return self._cache[("step_origin_items", any_code)]

    def step_loader_origins(self, any_code: bool = False) -> set[int]:
        """ids of the calls (:meth:`loader_origins`) that the step loops of XLA code draw
        their batches from and the module cannot see into (once per module). With
        ``any_code``, the step loops of code that is not XLA code here too (not in an XLA-off
        branch): a module without torch_xla whose loop the project's launched code reaches
        (the project layer settles where its functions run)."""
        key = ("step_origins", any_code)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = set()
            pairs = []
            for loop in self.loops if self.may_step() else ():
                if (not self.is_xla_off(loop.ctx) if any_code else self.in_xla_code(loop.ctx)) \
                        and self.is_step_loop(loop):
                    for e in self.loop_iterables(loop):
                        pairs.extend(self.loader_origins(e, loop.ctx))
            found.update(id(c) for c, _ in pairs)
            self._cache[("step_origin_items", any_code)] = origin_items(pairs)
        return found

    def passed_loader_param(self, func: FunctionInfo) -> int:
        """The index (in the ``def``, ``self`` counts) of the parameter every ``return`` of
        ``func`` gives back, itself or through loader wrappers and names bound once
        (``return pl.ParallelLoader(loader, [dev]).per_device_loader(dev)``, ``return loader``);
        -1 when none or they differ."""
        found = None
        for value, vctx in func.returns:
            index = self._passed_param(func, value, vctx, 0) if vctx is not None else -1
            if index < 0 or (found is not None and index != found):
                return -1
            found = index
        return -1 if found is None else found

    def _passed_param(self, func: FunctionInfo, expr, ctx: Ctx, depth: int) -> int:
        found = self._loader_param(expr, ctx, depth)
        return found[1] if found is not None and found[0] is func else -1

    def _loader_param(self, expr, ctx: Ctx, depth: int = 0):
        """``(function, index)`` of the parameter (``self`` counts) whose value ``expr`` is,
        itself or through loader wrappers, names bound once and ``self.<attr>`` set once
        (``self.train_loader = train_loader`` in ``__init__``), or None."""
        while depth <= 8 and expr is not None:
            depth += 1
            t = type(expr)
            if t is ast.Name:
                bindings = self.read_bindings(expr, ctx) or ()
                if len(bindings) != 1:
                    return None
                _, kind, target, b_ctx = bindings[0]
                if kind == "param":
                    ok = target is not None and expr.id in target.params
                    return (target, target.params.index(expr.id)) if ok else None
                if kind != "value" or b_ctx is None:
                    return None
                expr, ctx = target, b_ctx
                continue
            if t is ast.Attribute:
                if type(expr.value) is not ast.Name or ctx.func is None or ctx.func.cls is None \
                        or not ctx.func.params or expr.value.id != ctx.func.params[0]:
                    return None
                single = self.single_value(expr, ctx)  # self.train_loader
                if single is None:
                    return None
                expr, ctx = single
                continue
            if t is not ast.Call:
                return None
            q = self.call_name(expr, ctx)
            f = expr.func
            if q in (self.DEVICE_LOADERS[0], self.PARALLEL_LOADER):
                expr = self.kwarg(expr, "loader", 0)
                if not isinstance(expr, ast.AST):
                    return None
                continue
            if type(f) is ast.Attribute and f.attr == "per_device_loader":
                expr = f.value
                continue
            inner = self._wrapped_iterables(expr, ctx, q)
            if inner is None or len(inner) != 1:
                return None
            expr = inner[0]
        return None

    def iterated_params(self) -> dict[int, set[int]]:
        """``{id(function): {index, ...}}``: the parameters (``self`` counts) that a ``for``
        loop of the module iterates (:meth:`_loader_param`), any loop (a per-epoch function
        iterating the loader it is handed). Once per module."""
        found = self._cache.get("iter_params")
        if found is None:
            found = self._cache["iter_params"] = {}
            for loop in self.loops:
                if type(loop.node) in (ast.For, ast.AsyncFor):
                    p = self._loader_param(loop.node.iter, loop.ctx)
                    if p is not None:
                        found.setdefault(id(p[0]), set()).add(p[1])
        return found

    def step_loader_params(self) -> dict[int, set[int]]:
        """``{id(function): {index, ...}}``: the parameters (``self`` counts) whose value a
        training step loop of the module draws its batches from (:meth:`_loader_param`:
        ``for batch in self.train_loader:`` with ``self.train_loader = train_loader`` in
        ``__init__``), in code that is not XLA-off (the project layer settles where it runs);
        what a caller in another module passes there is trained on. Once per module."""
        found = self._cache.get("step_params")
        if found is None:
            found = self._cache["step_params"] = {}
            for loop in self.loops if self.may_step() else ():
                if self.is_xla_off(loop.ctx) or not self.is_step_loop(loop):
                    continue
                for e in self.loop_iterables(loop):
                    p = self._loader_param(e, loop.ctx)
                    if p is not None:
                        found.setdefault(id(p[0]), set()).add(p[1])
        return found

    def _passed_through(self, call: ast.Call, ctx: Ctx):
        """Project mode: the argument ``call`` hands to project functions that each give
        it back as their result, maybe wrapped in a device loader
        (:attr:`flake8_xla.project.HelperFacts.passes_loader`: ``strategy.device_loader(loader)``),
        or None."""
        if self.project_lookup is None or not call.args and not call.keywords:
            return None
        helpers = self.callee_helpers(call, ctx)
        if not helpers:
            return None
        index = {h.passes_loader - (1 if "." in h.qual else 0) for h in helpers}  # a method: without self
        if len(index) != 1 or any(h.passes_loader < 0 for h in helpers):
            return None
        i = index.pop()
        args = call.args
        if 0 <= i < len(args) and not any(type(a) is ast.Starred for a in args[:i + 1]):
            return args[i]
        return None

    def returned_loader_origins(self) -> set[int]:
        """ids of the calls (:meth:`loader_origins`) whose value a ``return`` of a function
        of the module gives back, through names and loader wrappers (``loader =
        super().train_dataloader()`` ... ``return pl.MpDeviceLoader(loader, self.device)``):
        where the function's own result is trained on, so is theirs (once per module)."""
        found = self._cache.get("returned_origins")
        if found is None:
            found = self._cache["returned_origins"] = set()
            for func in self.functions:
                for value, vctx in func.returns:
                    if vctx is not None:
                        found.update(id(c) for c, _ in self.loader_origins(value, vctx))
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
        for call, c in self.project_step_loaders():
            seen.setdefault(id(call), (call, c))
        out = sorted(seen.values(), key=lambda p: (p[0].lineno, p[0].col_offset))
        self._cache["step_loaders"] = out
        return out

    def project_step_loaders(self) -> list[tuple[ast.Call, Ctx]]:
        """Project mode: the ``DataLoader(...)`` calls of the module that a step loop of
        another module draws its batches from: returned to it (:meth:`_project_step_loaders`)
        or handed to it (:meth:`_handed_step_loaders`). Once per module."""
        found = self._cache.get("project_loaders")
        if found is None:
            found = self.stored_calls("loaders", ordered=False)  # (a warm run of an unchanged project: as stored)
            if found is None:
                found = self._project_step_loaders() + self._handed_step_loaders()
                indexes = self.call_indexes(found)
                if indexes is not None:  # (each a call of the walk in its own context: kept)
                    self.store_answer("loaders", indexes)
            self._cache["project_loaders"] = found
        return found

    def _handed_step_loaders(self) -> list:
        """Project mode: the ``DataLoader(...)`` calls of the module whose value (through
        names, wrappers and project calls that give it back) a call hands to a project
        function or class whose step loop iterates that parameter
        (:attr:`flake8_xla.project.HelperFacts.fed_params`: ``train_one_epoch(acc, model,
        train_batches, ...)``, ``TrainLoop(model, opt, train_loader)``), in XLA code."""
        if self.project_lookup is None or not self.calls_named((self.DATALOADER,)):
            return []
        out = []
        for call, ctx in self.calls:
            if not call.args or not self.in_xla_code(ctx) or type(call.func) not in (ast.Name, ast.Attribute):
                continue
            if not any(type(a) in (ast.Name, ast.Call, ast.Attribute) for a in call.args):
                continue
            helpers = self.callee_helpers(call, ctx)
            if not helpers or any(not h.fed_params for h in helpers):
                continue
            fed = set.intersection(*({i - (1 if "." in h.qual else 0) for i in h.fed_params} for h in helpers))
            for i, a in enumerate(call.args):
                if type(a) is ast.Starred:
                    break
                if i in fed:
                    out.extend(self.loader_sources(a, ctx))
        return out

    def _returned_items(self, func: FunctionInfo) -> list:
        """``(item, expr, ctx)`` of what the returns of ``func`` hold by position or constant
        key: a tuple display's elements (``return train_loader, val_loader``), a dict display's
        values (``return {"train": DataLoader(...), ...}``, also through a name bound once to it)."""
        out = []
        for value, vctx in func.returns:
            if vctx is None:
                continue
            if type(value) is ast.Name:
                single = self.single_value(value, vctx)
                if single is not None and type(single[0]) in (ast.Tuple, ast.Dict):
                    value, vctx = single
            if type(value) is ast.Tuple:
                out.extend((i, e, vctx) for i, e in enumerate(value.elts))
            elif type(value) is ast.Dict:
                for k, v in zip(value.keys, value.values):
                    key = self.const(k, vctx) if k is not None else None
                    if type(key) in (str, int) and not isinstance(key, bool):
                        out.append((key, v, vctx))
        return out

    @staticmethod
    def _fed(lookup, qual: str) -> tuple:
        """The calls of ``qual`` that feed a step loop of another module, each with the items
        of the result it reaches (``None``: whole): directly, through a call there that gives
        it back (``strategy.device_loader(loader)``), or through a caller returning it whose
        own call does so (the lookup's ``fed``)."""
        try:
            return lookup(qual, fed=True) or ()
        except (Exception, RecursionError):  # a project that cannot be read: unknown
            return ()

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
            if func.ctx is None or func.ctx.func is not None or not func.returns:
                continue  # (a module's function, or a method of its class: Cls.m)
            loaders = [pair for value, vctx in func.returns if vctx is not None
                       for pair in self.loader_sources(value, vctx)]
            items = [(i, pair) for i, e, vctx in self._returned_items(func) for pair in self.loader_sources(e, vctx)]
            if not loaders and not items:
                continue
            quals = quals or self.function_quals()
            try:
                calls = lookup(quals[id(func)], partial=True)  # one caller that trains on it is enough
            except (Exception, RecursionError):  # a project that cannot be read: unknown
                calls = None
            fed = self._fed(lookup, quals[id(func)]) if calls else ()
            if not fed:
                continue
            if any(got is None for _, got in fed):
                out.extend(loaders)
                continue
            wanted = set().union(*(got for _, got in fed))  # (train, val = build_loaders())
            out.extend(pair for i, pair in items if i in wanted)
        return out

"""Calls and launches: which module functions an expression names, the call graph, and the
code the XLA launcher (``xmp.spawn`` / ``torch_xla.launch``) runs.
"""

from __future__ import annotations

import ast
import sys

from .attributes import _static
from .runtime import chain_parts
from .scopes import UNKNOWN, ClassInfo, Ctx, FunctionInfo


class Calls:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    #: calls that return (a wrapper of) their first argument, which runs when the result is called
    SEE_THROUGH = ("functools.partial", "torch_xla.compile")

    def function_of(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> list[FunctionInfo]:
        """Module functions an expression names: ``f``, ``partial(f, ...)``, ``self.m``,
        ``Cls.m``, ``obj.m`` for ``obj = Cls(...)``, ``cb.m`` for ``cb`` a loop target over a
        list of instances (:meth:`_element_classes`), and what a ``lambda`` calls."""
        cache = self._cache
        if type(expr) is ast.Attribute and expr.attr not in (cache.get("member_names") or self._member_names()):
            return []  # no class of the module has a method or attribute of that name
        key = ("fo", id(expr))
        if key in cache:
            return cache[key]
        cache[key] = []  # cycles resolve to nothing
        result = self._function_of(expr, ctx, _depth)
        cache[key] = result
        return result

    def _function_of(self, expr, ctx, _depth):
        t = type(expr)
        if _depth > 8:
            return []
        if t is ast.Lambda:
            body = expr.body
            if type(body) is ast.Call:
                return self.function_of(body.func, Ctx(ctx.scope, ctx.func, (), ctx.frames), _depth + 1)
            return []
        if t is ast.Call:
            if expr.args or expr.keywords:
                q = self.qualname(expr.func, ctx)
                if q in self.SEE_THROUGH:  # partial(f, ...), torch_xla.compile(f) / compile(f=f): f runs
                    inner = expr.args[0] if expr.args else self.kwarg(expr, "f") if q == "torch_xla.compile" else None
                    return self.function_of(inner, ctx, _depth + 1) if isinstance(inner, ast.AST) else []
            if type(expr.func) is ast.Name:  # Cls(...): a callable object runs its __call__
                cls = self.class_named(expr.func.id, ctx)
                if cls is not None:
                    return self._mro_methods(cls, "__call__")
            return []
        if t is ast.Name:
            bindings = self.lookup(expr.id, ctx, None)
            if not bindings:
                return []
            out = []
            for _, kind, target, b_ctx in bindings:
                if kind == "def":
                    out.append(target)
                elif kind == "value" and type(target) in (ast.Name, ast.Attribute, ast.Call, ast.Lambda) \
                        and b_ctx is not None:
                    out.extend(f for f in self.function_of(target, b_ctx, _depth + 1) if f not in out)
            return out
        if t is ast.Attribute:  # (its name is one of _member_names: see function_of)
            base = expr.value
            cls = None
            own = False
            if type(base) is ast.Call and type(base.func) is ast.Name and base.func.id == "super" \
                    and not base.args and ctx.func is not None and ctx.func.cls is not None \
                    and self.lookup("super", ctx, None) is None:  # super().m(): the next class's m
                for c in self.mro(ctx.func.cls)[1:]:
                    if expr.attr in c.methods:
                        return [c.methods[expr.attr]]
                return []
            if type(base) is ast.Call and type(base.func) is ast.Name:  # Trainer().fit(loader)
                cls = self.class_named(base.func.id, ctx)
            if type(base) is ast.Name:
                func = ctx.func
                if func is not None and func.cls is not None and func.params and base.id == func.params[0]:
                    cls = func.cls
                    own = func.name not in ("__new__",) and not _static(func)
                else:
                    cls = self.class_named(base.id, ctx)
                    if cls is None:  # obj = Cls(...); obj.method
                        values = self.values(base, ctx)
                        if values and len(values) == 1 and type(values[0][0]) is ast.Call \
                                and type(values[0][0].func) is ast.Name:
                            cls = self.class_named(values[0][0].func.id, values[0][1])
                        elif values is None:  # for cb in callbacks: cb.on_step_end(...)
                            out = []
                            for c in self._element_classes(base, ctx):
                                out.extend(m for m in self._mro_methods(c, expr.attr) if m not in out)
                            if out:
                                return out
            if cls is not None:
                targets = self._self_dispatch(ctx.func, expr.attr) if own else None
                if targets is not None:  # project mode: what the classes of the objects it runs on run
                    return self._local_targets(targets)
                methods = self._mro_methods(cls, expr.attr)
                if own:  # self.m(): a subclass's override may run (attributes.py)
                    extra = self.self_method_overrides(cls, expr.attr)
                    if extra:
                        methods = methods + [m for m in extra if m not in methods]
                if methods:
                    return methods
                out = []  # self.step_fn = torch_xla.compile(self._step): what it was set to
                for c in self.mro(cls):
                    for value, v_ctx in c.attrs.get(expr.attr, ()):
                        if value is not None and type(value) in (ast.Name, ast.Attribute, ast.Call, ast.Lambda):
                            out.extend(f for f in self.function_of(value, v_ctx, _depth + 1) if f not in out)
                return out
        return []

    #: the packages whose functions and objects a call of an unknown callee cannot be
    #: (``crit = nn.CrossEntropyLoss(); crit(out, y)``: a torch object)
    _KNOWN_LIBRARIES = ("torch.", "torchvision.", "numpy.", "math.", "operator.", "builtins.")

    def unknown_callee(self, call: ast.Call, ctx: Ctx) -> bool:
        """The function ``call`` runs cannot be seen: a name bound to an item of a container,
        a loop variable, or what a call of a project or unknown function returned
        (``hook = HOOKS["sync"]``, ``for h in hooks: h(...)``, ``reduce = get_reducer()``), or a
        call of such an expression directly (``HOOKS["sync"](...)``, ``make_hook()(...)``);
        not a builtin, a function or class of the module, an import, a ``lambda`` or
        ``partial`` the module resolves, nor a torch object (``criterion(out, y)``)."""
        f = call.func
        t = type(f)
        if t is ast.Subscript:
            return True
        if t is ast.Call:
            if self.function_of(f, ctx):
                return False
            q = self.call_name(f, ctx)
            return q is None or not q.startswith(self._KNOWN_LIBRARIES)
        if t is not ast.Name:
            return False
        bindings = self.lookup(f.id, ctx, None)
        if bindings and any(kind == "def" and self._wrapped_def(target, b_ctx or ctx) for _, kind, target, b_ctx in bindings):
            return True  # @synced def plain_step(...): the call runs what the decorator returned
        if not bindings or any(kind in ("def", "class", "import", "param") for _, kind, _, _ in bindings):
            return False  # (a parameter: what the callers hand in, project mode's to follow)
        if self.function_of(f, ctx) or self.used_as_module(f, ctx) or self.is_model(f, ctx):
            return False
        for _, kind, target, b_ctx in bindings:
            if kind == "value" and isinstance(target, ast.AST):
                if type(target) is ast.Call:
                    q = self.call_name(target, b_ctx or ctx)
                    if q is None or q.startswith(self._KNOWN_LIBRARIES):
                        return False  # criterion = nn.CrossEntropyLoss(); model = model.to(dev)
                elif type(target) in (ast.Name, ast.Attribute):
                    if self.qualname(target, b_ctx or ctx) is not None:
                        return False  # act = torch.relu, hook = log_hook: a named function
                elif type(target) is not ast.Subscript:
                    return False
        return True

    def _wrapped_def(self, func, ctx: Ctx) -> bool:
        """Function ``func`` (a ``FunctionInfo``) has a decorator that is neither a library's
        (``torch.no_grad``, ``functools.lru_cache``, ``staticmethod``) nor a known transparent one: its
        name runs what the decorator returned."""
        node = getattr(func, "node", None)
        for d in getattr(node, "decorator_list", ()):
            target = d.func if type(d) is ast.Call else d
            q = self.qualname(target, ctx)
            if q is None:
                if type(target) is ast.Name and target.id in ("staticmethod", "classmethod", "property") \
                        and self.lookup(target.id, ctx, None) is None:
                    continue
                return True
            if not q.startswith(self._KNOWN_LIBRARIES + ("functools.", "torch_xla.", "contextlib.", "typing.")):
                return True
        return False

    def _self_dispatch(self, func: FunctionInfo | None, name: str) -> tuple | None:
        """Project mode: the ``(file, "Cls.m")`` methods that ``self.name(...)`` in method
        ``func`` runs, when every launch of the project reaching ``func`` runs it on objects
        of known classes (:attr:`project_dispatch`); ``None`` when unknown (then the module
        alone resolves it), and outside project mode."""
        dispatch = self.project_dispatch
        if not dispatch or func is None:
            return None
        table = dispatch.get(self.function_quals().get(id(func)))
        return table.get(name) if table else None

    def _local_targets(self, targets: tuple) -> list[FunctionInfo]:
        """The functions of this module among dispatch targets (``("", qual)``: the module's
        own; other refs name other modules)."""
        by_qual = self._cache.get("functions_by_qual")
        if by_qual is None:
            quals = self.function_quals()
            by_qual = self._cache["functions_by_qual"] = {quals[id(f)]: f for f in self.functions if id(f) in quals}
        return [by_qual[q] for file, q in targets if not file and q in by_qual]

    def _element_classes(self, name: ast.Name, ctx: Ctx) -> list[ClassInfo]:
        """The module's classes whose instances ``name`` may hold as the target of an
        enclosing ``for`` loop over a list or tuple display (or a name, or ``self.`` attribute,
        bound once to one, or to a parameter the module's calls pass one:
        ``Trainer([PrintCb()])``) of constructor calls: ``for cb in [PrintCb(), SaveCb(out)]:``.
        Elements that are not such calls add nothing (what they run is unknown)."""
        for lp in reversed(ctx.loops):
            target = lp.node.target if type(lp.node) in (ast.For, ast.AsyncFor) else None
            if target is None or type(target) is not ast.Name or target.id != name.id:
                continue
            displays = []
            origin = self.receiver_origin(lp.node.iter, lp.ctx)
            if origin is not None and not origin[2]:  # self.callbacks = list(callbacks): what calls pass
                displays = self.param_arguments(origin[0], origin[1]) or []
            else:
                it, ictx = lp.node.iter, lp.ctx
                if type(it) in (ast.Name, ast.Attribute):
                    single = self.single_value(it, ictx)
                    if single is None:
                        return []
                    it, ictx = single
                displays = [(it, ictx)]
            out = []
            for it, ictx in displays:
                if type(it) not in (ast.List, ast.Tuple) or ictx is None:
                    continue
                for elt in it.elts:
                    if type(elt) is ast.Call and type(elt.func) is ast.Name:
                        cls = self.class_named(elt.func.id, ictx)
                        if cls is not None and cls not in out:
                            out.append(cls)
            return out
        return []

    def _member_names(self) -> frozenset[str]:
        """The names of every method and instance attribute of the module's classes (built
        once): ``obj.name`` names a module function only when ``name`` is one of them."""
        found = self._cache.get("member_names")
        if found is None:
            names = set()
            for cls in self.classes:
                names.update(cls.methods)
                names.update(cls.attrs)
            found = self._cache["member_names"] = frozenset(names)
        return found

    def method_calls(self, *names: str) -> list[tuple[ast.Call, Ctx]]:
        """Calls spelled ``x.name(...)`` (any receiver, resolved or not) for each of
        ``names``: each name's calls in walk order, one name after the other (the walk
        fills the index). Do not modify the list returned."""
        index = self.attr_calls
        if len(names) == 1:
            return index.get(names[0], [])
        return [rec for name in names for rec in index.get(name, ())]

    def class_named(self, name: str, ctx: Ctx) -> ClassInfo | None:
        bindings = self.lookup(name, ctx, None)
        if bindings and len(bindings) == 1 and bindings[0][1] == "class":
            return bindings[0][2]
        return None

    def mro(self, cls: ClassInfo) -> list[ClassInfo]:
        """``cls`` and its base classes defined in the module, nearest first: breadth first
        over the bases, each class once (cycle-safe). Do not modify the list returned.

        Memoised per class, and built bases first (iteratively: no recursion limit) so that
        a class reuses the MRO of the one class left to expand where that is exact (see
        :meth:`_breadth_first`): N classes each subclassing the one before cost N steps, not
        N squared; the answer never depends on which class was asked first."""
        found = self._cache.get(("mro", id(cls)))
        if found is None:
            for c in self._bases_first(cls, "mro"):
                self._cache[("mro", id(c))] = self._breadth_first(c)
            found = self._cache[("mro", id(cls))]
        return found

    def mro_any(self, cls: ClassInfo, key: str, pred) -> bool:
        """``any(pred(c) for c in self.mro(cls))``, memoised per class under ``key`` (one key
        per predicate): a class's answer is its own ``pred`` or its bases' answers, so a chain
        of N subclasses costs N predicates; a class on a cycle of bases scans its MRO."""
        cache = self._cache
        found = cache.get((key, id(cls)))
        if found is None:
            for c in self._bases_first(cls, key):
                bases = self._class_bases(c)
                if all((key, id(b)) in cache for b in bases):
                    result = bool(pred(c)) or any(cache[(key, id(b))] for b in bases)
                else:  # a base waits on c (a cycle): its answer is not known yet
                    result = any(pred(x) for x in self.mro(c))
                cache[(key, id(c))] = result
            found = cache[(key, id(cls))]
        return found

    def _class_bases(self, cls: ClassInfo) -> list[ClassInfo]:
        """The module classes ``cls`` names as bases (plain names), in order (memoised)."""
        key = ("bases", id(cls))
        found = self._cache.get(key)
        if found is None:
            found = []
            for base in cls.node.bases:
                if type(base) is ast.Name:
                    b = self.class_named(base.id, cls.ctx)
                    if b is not None:
                        found.append(b)
            self._cache[key] = found
        return found

    def _bases_first(self, cls: ClassInfo, key: str):
        """Yield ``cls`` and the classes above it whose ``(key, id(class))`` answer is not
        cached yet, each after its bases (but around a cycle of bases), ``cls`` last. The
        caller caches each class's answer before asking for the next."""
        cache = self._cache
        todo, waiting = [cls], set()
        while todo:
            c = todo[-1]
            if (key, id(c)) in cache:
                todo.pop()
                continue
            if id(c) not in waiting:
                waiting.add(id(c))
                pending = [b for b in self._class_bases(c) if (key, id(b)) not in cache and id(b) not in waiting]
                if pending:
                    todo.extend(pending)
                    continue
            todo.pop()
            yield c

    def _breadth_first(self, cls: ClassInfo) -> list[ClassInfo]:
        """The breadth-first walk over the bases behind :meth:`mro`. When one class is left
        to expand and its MRO is known, the rest of the walk is that MRO less the classes
        already seen, appended at once: every other seen class is expanded already, so its
        bases are seen, and expanding it again (as the known MRO did) finds no new class."""
        cache = self._cache
        out, seen, i = [cls], {cls}, 0
        while i < len(out):
            if i and i == len(out) - 1:
                rest = cache.get(("mro", id(out[i])))
                if rest is not None:
                    cache[("mro_reused", id(cls))] = i  # (for _method_table)
                    return list(dict.fromkeys(out + rest))  # out, then rest's classes not in out
            c = out[i]
            i += 1
            for b in self._class_bases(c):
                if b not in seen:
                    seen.add(b)
                    out.append(b)
        return out

    def _mro_methods(self, cls: ClassInfo, name: str) -> list[FunctionInfo]:
        """The method ``name`` of an instance of ``cls``: of the first class of its MRO that
        defines one (a list of one), or none."""
        method = self._method_table(cls).get(name)
        return [method] if method is not None else []

    def _method_table(self, cls: ClassInfo) -> dict[str, FunctionInfo]:
        """name -> the method an instance of ``cls`` has under it (the first class of the MRO
        defining it wins), in the order a scan of the MRO meets the names. Do not modify. Memoised per class, built bases first: where the
        MRO reused the MRO of an ancestor (:meth:`_breadth_first`), that ancestor's table
        under the methods of the classes before it, so N subclasses cost N small tables."""
        cache = self._cache
        found = cache.get(("mtable", id(cls)))
        if found is None:
            for c in self._bases_first(cls, "mtable"):
                order = self.mro(c)
                split = cache.get(("mro_reused", id(c)))
                below = cache.get(("mtable", id(order[split]))) if split is not None else None
                table: dict = {}
                for k in order[:split + 1] if below is not None else order:
                    for name, method in k.methods.items():
                        table.setdefault(name, method)
                if below is not None:  # (C-level merges: a chain of N classes is N small tables)
                    # the names of the classes before the reused MRO first, then the ancestor's
                    # other names in its order (the order a scan of the MRO finds them in); the
                    # earlier classes' methods win
                    table = {**table, **below, **table}
                cache[("mtable", id(c))] = table
            found = cache[("mtable", id(cls))]
        return found

    def _class_methods(self, cls: ClassInfo) -> list[FunctionInfo]:
        """The methods an instance of ``cls`` has: a subclass's override hides the base's
        (in the order a scan of the MRO meets their names; memoised per class)."""
        key = ("class_methods", id(cls))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = list(self._method_table(cls).values())
        return found

    def callees(self, func: FunctionInfo) -> list[FunctionInfo]:
        """Module functions ``func`` calls or refers to (methods of classes it instantiates too)."""
        key = ("callees", id(func))
        if key in self._cache:
            return self._cache[key]
        out = []
        inner_ctx = Ctx(func.scope, func, (), ())
        loads = self._loads_by_func().get(id(func), {})
        defined = self._defined_names()
        for name in func.names:
            if name not in defined:
                continue  # no def or class of the module has that name: nothing to find
            sites = loads.get(name, ())
            if sites and all(self._frames_off(c) for c in sites):
                continue  # only named where XLA is off: `if not use_tpu: return train_gpu(...)`
            bindings = self.lookup(name, inner_ctx, None)
            if not bindings:
                continue
            for _, kind, target, _ in bindings:
                if kind == "def":
                    out.append(target)
                elif kind == "class":
                    out.extend(self._class_methods(target))
        for call, ctx in func.calls:
            # the branch test first: function_of's answers inside a cycle of references
            # depend on which expression is asked first, so ask only where the answer counts
            if type(call.func) is ast.Attribute and not self._frames_off(ctx):
                out.extend(self.function_of(call.func, ctx))
        # nested defs run when their parent runs (closures, local helpers)
        nested = self._cache.get("nested_defs")
        if nested is None:
            nested = self._cache["nested_defs"] = {}
            for f in self.functions:
                if f.ctx.func is not None:
                    nested.setdefault(id(f.ctx.func), []).append(f)
        out.extend(nested.get(id(func), ()))
        self._cache[key] = out
        return out

    def _defined_names(self) -> frozenset[str]:
        """The names the module's ``def`` and ``class`` statements bind (built once)."""
        found = self._cache.get("defined_names")
        if found is None:
            found = self._cache["defined_names"] = frozenset(
                [f.name for f in self.functions] + [c.name for c in self.classes])
        return found

    def _loads_by_func(self) -> dict[int, dict[str, list[Ctx]]]:
        """id(function) -> name -> the contexts it is read in there (indexed once: asking
        each function's names of the whole module's reads was quadratic)."""
        index = self._cache.get("loads_by_func")
        if index is None:
            index = {}
            for name, ctxs in self.name_loads.items():
                for c in ctxs:
                    if c.func is not None:
                        index.setdefault(id(c.func), {}).setdefault(name, []).append(c)
            self._cache["loads_by_func"] = index
        return index

    def reachable(self, roots: list[FunctionInfo]) -> set[int]:
        """ids of functions reachable from ``roots`` through :meth:`callees`."""
        seen: set[int] = set()
        todo = list(roots)
        while todo:
            f = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            todo.extend(self.callees(f))
        return seen

    XLA_LAUNCHERS = ("torch_xla.distributed.xla_multiprocessing.spawn", "torch_xla.launch")
    TORCH_LAUNCHERS = ("torch.multiprocessing.spawn", "torch.multiprocessing.start_processes")

    def launches(self) -> list[tuple[ast.Call, Ctx, list[FunctionInfo], bool]]:
        """Launch calls: ``(call, ctx, target functions, single_process)``.

        ``xmp.spawn`` / ``torch_xla.launch`` anywhere; ``torch.multiprocessing.spawn`` /
        ``start_processes`` only in XLA code; the user's launch wrappers (``xla-launchers``)
        anywhere. Targets are the module functions named by the first argument or ``fn=``;
        an empty list means the target cannot be seen.
        """
        if "launches" in self._cache:
            return self._cache["launches"]
        out = []
        for call, ctx in self.calls_to(*self.XLA_LAUNCHERS, *self.TORCH_LAUNCHERS):
            q = self.call_name(call, ctx)
            if q in self.TORCH_LAUNCHERS and not self.in_xla_code(ctx):
                continue
            target = self.kwarg(call, "fn", 0)
            targets = self.function_of(target, ctx) if isinstance(target, ast.AST) else []
            nprocs = self.const(self.kwarg(call, "nprocs", 2), ctx) if q != "torch_xla.launch" else None
            debug = self.const(self.kwarg(call, "debug_single_process", 3), ctx) if q == "torch_xla.launch" else None
            single = nprocs == 1 or debug is True
            out.append((call, ctx, targets, single))
        known = {id(rec[0]) for rec in out}
        project = set(self.project_launchers)
        user = tuple(n for n in self.settings.launchers if n not in project)
        for call, ctx in self.calls_named(user) + self.project_launcher_calls():  # in-house wrappers
            target = self.kwarg(call, "fn", 0)
            if id(call) not in known and isinstance(target, ast.AST):
                known.add(id(call))
                out.append((call, ctx, self.function_of(target, ctx), False))
        out.sort(key=lambda rec: (rec[0].lineno, rec[0].col_offset))
        self._cache["launches"] = out
        return out

    def launched(self, multi_only: bool = False) -> set[int]:
        """ids of functions run by a launcher (targets and what they call in the module)."""
        key = ("launched", multi_only)
        if key not in self._cache:
            roots = [t for _, _, targets, single in self.launches() if not (multi_only and single) for t in targets]
            roots += self.project_roots(multi_only)
            self._cache[key] = self.reachable(roots)
        return self._cache[key]

    def function_quals(self) -> dict[int, str]:
        """id(function) -> its name in the module: ``f``, ``Cls.m``, ``outer.inner`` (built once;
        the names project summaries use)."""
        found = self._cache.get("function_quals")
        if found is None:
            found = self._cache["function_quals"] = {}
            for func in self.functions:  # walk order: a parent def comes before its nested defs
                parent = func.ctx.func
                if parent is not None and id(parent) in found:
                    found[id(func)] = f"{found[id(parent)]}.{func.name}"
                elif func.cls is not None:
                    found[id(func)] = f"{func.cls.name}.{func.name}"
                else:
                    found[id(func)] = func.name
        return found

    def project_roots(self, multi_only: bool = False) -> list[FunctionInfo]:
        """The module's functions that launched XLA code of other project modules reaches
        (project mode, :attr:`project_reached`); with ``multi_only``, through a
        multi-process launch. Empty outside project mode."""
        reached = self.project_reached
        if not reached:
            return []
        quals = self.function_quals()
        return [f for f in self.functions if reached.get(quals[id(f)], None) in ((True,) if multi_only else (True, False))]

    def project_helper(self, func_expr: ast.AST, ctx: Ctx, method: str | None = None, single: bool = False):
        """Project mode's facts (:class:`flake8_xla.project.HelperFacts`) about the function of
        another project module that ``func_expr`` names through the module's imports
        (``iterate_batches``, ``utils.train_fn``; with ``method``, that method of the class it
        names: ``CheckpointSaver`` + ``save``). ``None`` outside project mode, for a name a
        local binding shadows, or for anything not a project function; with ``single``, also
        for a name two imports bind (which one runs is not guessed) and for a method of what a
        parameter holds."""
        lookup = self.project_lookup
        if lookup is None:
            return None
        chain = self._import_chain(func_expr, ctx, single=single)
        if chain is None:
            remote = self._remote_override(func_expr, ctx) if method is None else None
            if remote is not None:
                return remote
            if method is None and not single and type(func_expr) is ast.Attribute:
                return self._receiver_helper(func_expr, ctx)
            return None  # bound by a local, a parameter, or not by a module-level import
        parts = list(reversed(chain + ((method,) if method else ())))
        key = ("project_helper", tuple(parts))
        cache = self._cache
        if key not in cache:
            try:
                cache[key] = lookup(tuple(reversed(parts)))
            except (Exception, RecursionError):  # the project cannot be read: unknown
                cache[key] = None
        return cache[key]

    def _remote_override(self, func_expr: ast.AST, ctx: Ctx):
        """``self.m`` in a method whose objects all run one method ``m`` of another module
        (:meth:`_self_dispatch`: a subclass's override): that method's
        :class:`flake8_xla.project.HelperFacts`; else ``None``."""
        found = self.remote_overrides(func_expr, ctx)
        return found[0] if found is not None and len(found) == 1 else None

    def remote_overrides(self, func_expr: ast.AST, ctx: Ctx) -> tuple | None:
        """``self.m`` in a method whose objects all run methods ``m`` of other modules
        (:meth:`_self_dispatch`): each one's :class:`flake8_xla.project.HelperFacts`
        (``None`` when one is unknown, or one runs in this module)."""
        func = ctx.func
        if type(func_expr) is not ast.Attribute or type(func_expr.value) is not ast.Name or func is None \
                or func.cls is None or not func.params or func_expr.value.id != func.params[0] \
                or self.project_lookup is None:
            return None
        targets = self._self_dispatch(func, func_expr.attr)
        if not targets or self._local_targets(targets) or any(not file for file, _ in targets):
            return None
        out = []
        cache = self._cache
        for target in targets:
            key = ("remote_override", target)
            if key not in cache:
                file, qual = target
                head, _, m = qual.rpartition(".")
                try:
                    cache[key] = self.project_lookup((m,), cls=(file, head))
                except (Exception, RecursionError):  # the project cannot be read: unknown
                    cache[key] = None
            if cache[key] is None:
                return None
            out.append(cache[key])
        return tuple(out)

    def _receiver_helper(self, func_expr: ast.Attribute, ctx: Ctx):
        """``backend.m`` where ``backend`` is a parameter holding instances of exactly one
        project class (:meth:`receiver_classes`, launch wrappers' ``self`` only: nothing
        else is read): that class's method ``m`` (its own or inherited), else ``None``."""
        key = ("recvhelper", id(func_expr))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        refs = self.receiver_classes(func_expr.value, ctx)
        if refs is not None and len(refs) == 1:
            try:
                cache[key] = self.project_lookup((func_expr.attr,), cls=refs[0])
            except (Exception, RecursionError):  # the project cannot be read: unknown
                cache[key] = None
        return cache[key]

    def callee_helpers(self, call: ast.Call, ctx: Ctx) -> tuple | None:
        """Project mode: the :class:`flake8_xla.project.HelperFacts` of every project function
        ``call`` may run, one per target, however the callee is named:

        - a function or class method the module's imports name (``utils.train_fn``);
        - the overrides ``self.m()`` runs on the objects that reach the method (a subclass's
          ``training_step`` in another module: :meth:`remote_overrides`);
        - a method of the classes the receiver holds: a launch wrapper's ``self``, what the
          callers of the function pass for the parameter it came from (``self.strategy =
          strategy`` ... ``Trainer(XLAStrategy())``: :meth:`param_object_helpers`);
        - a method of an object built from an imported class or builder, in the function or
          once on ``self`` (``saver = CheckpointSaver(dir)``; ``saver.save(...)``;
          ``self.logger = MetricLogger()`` in ``__init__``).

        ``None`` outside project mode, for a call of nothing in the project, or when one
        target is unknown. Memoised per call. What the targets agree on is
        :meth:`callee_agree`."""
        if self.project_lookup is None or type(call.func) not in (ast.Name, ast.Attribute):
            return None
        key = ("callee_helpers", id(call))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        f = call.func
        found = None
        overrides = self.remote_overrides(f, ctx)
        if overrides:
            found = overrides
        elif type(f) is ast.Attribute and not self._project_defines(f.attr) and self._import_chain(f, ctx) is None:
            found = None  # x.m() of no import: every target below is a method m, and no file defines one
        else:
            helper = self.project_helper(f, ctx)
            if helper is not None:
                found = (helper,)
            elif type(f) is ast.Attribute and type(f.value) in (ast.Name, ast.Attribute):
                found = self._resolved_helpers(f, ctx) or self.param_object_helpers(call, ctx)
                if found is None:  # saver = Saver(...); self.logger = MetricLogger(...) in __init__
                    if type(f.value) is ast.Name:
                        values = self.values(f.value, ctx)
                        single = values[0] if values and len(values) == 1 else None
                    else:
                        single = self.single_value(f.value, ctx)
                    if single is not None and type(single[0]) is ast.Call and single[1] is not None:
                        helper = self._built_method(single[0], single[1], f.attr)
                        found = (helper,) if helper is not None else None
                if found is None and type(f.value) is ast.Name:
                    found = self._local_caller_objects(f.value, ctx, f.attr)
                if found is None and type(f.value) is ast.Name:
                    found = self._element_helpers(f, ctx)
        cache[key] = found
        return found

    def _element_helpers(self, f: ast.Attribute, ctx: Ctx) -> tuple | None:
        """Project mode: ``cb.m`` with ``cb`` the target of an enclosing ``for`` loop over a
        list or tuple display (or a name bound once to one) whose every element builds an
        object of another module's class (``hooks = [SyncHook(), Logger()]``): the
        :class:`flake8_xla.project.HelperFacts` of each class's ``m``; ``None`` when an
        element is anything else or a method cannot be read."""
        name = f.value.id
        for lp in reversed(ctx.loops):
            target = lp.node.target if type(lp.node) in (ast.For, ast.AsyncFor) else None
            if target is None or type(target) is not ast.Name or target.id != name:
                continue
            it, ictx = lp.node.iter, lp.ctx
            if type(it) is ast.Name:
                single = self.single_value(it, ictx)
                if single is None:
                    return None
                it, ictx = single
            if type(it) not in (ast.List, ast.Tuple) or ictx is None or not it.elts:
                return None
            out = []
            for elt in it.elts:
                if type(elt) is not ast.Call or type(elt.func) not in (ast.Name, ast.Attribute) \
                        or (type(elt.func) is ast.Name and self.class_named(elt.func.id, ictx) is not None):
                    return None
                helper = self._built_method(elt, ictx, f.attr)
                if helper is None:
                    return None
                out.append(helper)
            return tuple(out)
        return None

    def _resolved_helpers(self, f: ast.Attribute, ctx: Ctx) -> tuple | None:
        """Project mode: the :class:`flake8_xla.project.HelperFacts` of the methods the
        project's reach resolved the call ``f(...)`` on an attribute chain to
        (:attr:`project_resolved`: ``trainer.strategy.optimizer_step`` on the launched
        ``XLAStrategy``); ``None`` when it resolved none or one cannot be read."""
        if not self.project_resolved or ctx.func is None:
            return None
        parts = chain_parts(f.value)
        qual = self.function_quals().get(id(ctx.func))
        refs = self.project_resolved.get((qual, ".".join(parts) + "." + f.attr)) if parts and qual else None
        if not refs:
            return None
        helpers = []
        for file, mqual in refs:
            try:
                helper = self.project_lookup((f.attr,), cls=(file, mqual.rpartition(".")[0]))
            except (Exception, RecursionError):
                helper = None
            if helper is None:
                return None
            helpers.append(helper)
        return tuple(helpers)

    def _project_defines(self, name: str) -> bool:
        """Project mode: some file of the project may define a function or method ``name``
        (``project_lookup.defines``, one set lookup; true when the lookup does not say)."""
        defines = getattr(self.project_lookup, "defines", None)
        if defines is None:
            return True
        try:
            return defines(name)
        except (Exception, RecursionError):  # the project cannot be read: unknown
            return True

    def _built_method(self, built: ast.Call, ctx: Ctx, method: str):
        """:class:`flake8_xla.project.HelperFacts` of method ``method`` of the object project
        call ``built`` builds: a project class or builder (``Saver(dir)``), or a factory given
        its literal arguments (``get_accelerator(config.BACKEND)``: the branch's class)."""
        helper = self.project_helper(built.func, ctx, method=method)
        return helper if helper is not None else self._factory_method(built, ctx, method)

    def _local_caller_objects(self, name: ast.Name, ctx: Ctx, method: str) -> tuple | None:
        """Project mode: the method ``method`` of the objects that the calls of this module
        pass for parameter ``name`` of ``ctx``'s function (a module-level function), where
        XLA code runs (a call in an XLA-off branch says nothing of the XLA run:
        ``run(get_strategy(cfg["strategy"]), cfg)`` in the ``else`` of ``if cfg["strategy"] ==
        "xla":``), each built by a project call (``run(get_strategy("xla"), cfg)``); ``None``
        unless every such call's object is known."""
        func = ctx.func
        bindings = self.read_bindings(name, ctx) or ()
        if func is None or func.cls is not None or func.ctx is None or func.ctx.func is not None \
                or len(bindings) != 1 or bindings[0][1] != "param" or bindings[0][2] is not func:
            return None
        helpers = []
        for arg, _, cctx in self.passed_arguments(func, name.id):
            if cctx is None or self.is_xla_off(cctx):
                continue
            if not isinstance(arg, ast.AST) or arg is UNKNOWN:
                return None
            single = self.single_value(arg, cctx) if type(arg) is ast.Name else (arg, cctx)
            if single is None or type(single[0]) is not ast.Call or single[1] is None:
                return None
            helper = self._built_method(single[0], single[1], method)
            if helper is None:
                return None
            if helper not in helpers:
                helpers.append(helper)
        return tuple(helpers) or None

    def literal_arguments(self, call: ast.Call, ctx: Ctx) -> tuple[tuple, dict]:
        """``(args, kwargs)``: the literal value (str, int, float, bool) of each positional
        argument of ``call`` up to a splat (``None`` for one that is no literal, or not
        seen: ``config.BACKEND`` of another module counts, :meth:`const`) and of each keyword
        argument that is one."""
        args = []
        for a in call.args:
            if type(a) is ast.Starred:
                break
            got = self.const(a, ctx)
            args.append(got if type(got) in (str, int, float, bool) else None)
        kwargs = {}
        for k in call.keywords:
            got = self.const(k.value, ctx) if k.arg else None
            if k.arg and type(got) in (str, int, float, bool):
                kwargs[k.arg] = got
        return tuple(args), kwargs

    def _factory_method(self, built: ast.Call, ctx: Ctx, method: str):
        """:class:`flake8_xla.project.HelperFacts` of method ``method`` of the class a
        project builder's call ``built`` builds, given its literal arguments
        (``get_accelerator(config.BACKEND)`` with ``BACKEND = "tpu"``); else ``None``."""
        chain = self._import_chain(built.func, ctx)
        if chain is None:
            return None
        try:
            return self.project_lookup(tuple(chain) + (method,), factory=self.literal_arguments(built, ctx))
        except (Exception, RecursionError):  # the project cannot be read: unknown
            return None

    def callee_agree(self, call: ast.Call, ctx: Ctx, attr: str):
        """The value of :class:`flake8_xla.project.HelperFacts` field ``attr`` that every
        project function ``call`` may run agrees on (:meth:`callee_helpers`), when it is not
        empty (``returns_loader`` ``"plain"``, ``returns_wrap`` ``"ddp"``); else ``None``."""
        helpers = self.callee_helpers(call, ctx)
        if not helpers:
            return None
        first = getattr(helpers[0], attr)
        if not first and first != 0:
            return None
        return first if all(getattr(h, attr) == first for h in helpers[1:]) else None

    def param_object_helpers(self, call: ast.Call, ctx: Ctx) -> tuple | None:
        """Project mode: the :class:`flake8_xla.project.HelperFacts` of the methods a call
        ``obj.m(...)`` runs, where ``obj`` is what a parameter brought in (or an element of
        it: :meth:`receiver_origin`) and :meth:`param_classes` knows the project classes it
        holds (``trainer.save_model(path)`` in a callback's ``on_epoch_end(self, trainer,
        epoch)``, called with the trainer's ``self``; ``backend.save(state, path)`` in a
        function launched through ``TPUBackend.launch``): one per class. ``None`` when
        unknown: no caller seen, a caller passing anything else, a method no class has.
        Memoised per call."""
        f = call.func
        if self.project_lookup is None or type(f) is not ast.Attribute \
                or type(f.value) not in (ast.Name, ast.Attribute):
            return None
        key = ("objhelpers", id(call))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        origin = self.receiver_origin(f.value, ctx)
        refs = self.param_classes(*origin) if origin is not None else None
        if not refs:
            return None
        helpers = []
        for ref in refs:
            try:
                helper = self.project_lookup((f.attr,), cls=ref)
            except (Exception, RecursionError):
                helper = None
            if helper is None:
                return None
            helpers.append(helper)
        found = cache[key] = tuple(helpers)
        return found

    def param_classes(self, func: FunctionInfo, param: str, element: bool = False,
                      callers: bool = True) -> tuple | None:
        """Project mode: the project classes (``(file, "Cls")``) whose instances parameter
        ``param`` of ``func`` (a function of a top-level scope) holds, or with ``element``
        one element of it holds, wherever it runs:

        - launched through a project's launch wrapper that hands its own ``self`` on
          (``backend.launch(_worker, ...)`` with ``TPUBackend.launch(self, fn, *args)``
          calling ``torch_xla.launch(fn, args=(self, *args))``: ``_worker(index, backend,
          ...)``'s ``backend`` is a ``TPUBackend``): every launch of ``func`` in the module
          through wrappers of that name agreeing on the class and the position, and no
          direct call of ``func`` in the module;
        - else (with ``callers``; it reads other modules) what every caller in other
          project modules passes: :data:`~flake8_xla.project.callers.INSTANCE` /
          ``INSTANCES`` arguments (:func:`flake8_xla.project.callers_lookup`).

        ``None`` when unknown (no launch or caller seen, one passing anything else, wrappers
        of that name that disagree or hand on no ``self``). Memoised."""
        if func.ctx is None or func.ctx.func is not None or (func.cls is not None and func.cls.ctx.func is not None):
            return None
        key = ("paramcls", id(func), param, element, callers)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        found = self._launched_self_classes(func, param) if not element else None
        if found is None and callers:
            found = self._caller_classes(func, param, element)
        cache[key] = found
        return found

    def _launched_self_classes(self, func: FunctionInfo, param: str) -> tuple | None:
        selves = self.project_launcher_selves
        if not selves or func.cls is not None or param not in func.params:
            return None
        names = tuple(dict.fromkeys(n for n, _, _ in selves))
        index = func.params.index(param)
        found = None
        for call, c in self.calls_named(names):
            target = self.kwarg(call, "fn", 0)
            if type(target) is not ast.Name or func not in self.function_of(target, c):
                continue
            f = call.func
            last = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else None
            entries = {(ref, pos) for n, ref, pos in selves if n == last}
            if len(entries) != 1:
                return None  # wrappers of that name that disagree (or none known)
            ref, pos = next(iter(entries))
            if pos < 0 or not ref[1]:
                return None  # what the wrapper hands on is unknown
            if index != 1 + pos:
                return None  # another parameter: not the wrapper's self
            if found is not None and found != ref:
                return None
            found = ref
        if found is None or self.calls_of(func):
            return None  # a direct call passes something else
        return (found,)

    def _caller_classes(self, func: FunctionInfo, param: str, element: bool) -> tuple | None:
        if self.project_callers is None:
            return None
        qual = self.function_quals().get(id(func))
        if qual is None:
            return None
        index = func.params.index(param) if param in func.params else None
        if func.cls is not None:
            index = index - 1 if index is not None else None
            if func.name == "__init__":
                qual = func.cls.name  # a constructor call passes __init__'s parameters
        try:
            calls = self.project_callers(qual, partial=True, xla_only=True)
        except (Exception, RecursionError):  # a project that cannot be read: unknown
            return None
        want = "instances" if element else "instance"
        refs: list = []
        if not calls and getattr(self.project_callers, "objects", None) is not None:
            # no caller: what the reach saw it hold where a launch hands the function on
            # (launcher.launch(train, cfg) -> xmp.spawn(function, args=(self._strategy, *args)))
            try:
                return self.project_callers.objects(self.function_quals().get(id(func)), param, element)
            except (Exception, RecursionError):
                return None
        for c in calls or ():
            arg = c.argument(index, param)
            if arg is None or arg.kind != want:
                return None
            refs.extend(r for r in arg.refs if r not in refs)
        return tuple(refs) or None

    def receiver_classes(self, expr: ast.AST, ctx: Ctx, callers: bool = False) -> tuple | None:
        """Project mode: the project classes whose instances ``expr`` holds when every value
        it may hold is what a parameter brought in (:meth:`receiver_origin`,
        :meth:`param_classes`; ``callers``: also from what other modules' callers pass,
        which reads them). ``None`` when unknown."""
        if type(expr) not in (ast.Name, ast.Attribute) or not (self.project_launcher_selves or (
                callers and self.project_callers is not None)):
            return None
        key = ("recvcls", id(expr), callers)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        origin = self.receiver_origin(expr, ctx)
        found = cache[key] = self.param_classes(*origin, callers=callers) if origin is not None else None
        return found

    def project_module_class(self, func_expr: ast.AST, ctx: Ctx) -> bool:
        """``func_expr`` names, through the module's imports, a class of another project
        module that subclasses ``torch.nn.Module`` (:attr:`project_defs`). False outside
        project mode, for a name a local binding shadows, or when unknown."""
        facts = self._project_def(func_expr, ctx)
        return facts is not None and facts.module_class

    def project_returns_param(self, func_expr: ast.AST, ctx: Ctx) -> int:
        """The index of the parameter the function of another project module that
        ``func_expr`` names returns unchanged (``shard_batch(t, mesh)`` returns ``t``); -1
        outside project mode, for a name a local binding shadows, or when none/unknown."""
        facts = self._project_def(func_expr, ctx)
        return facts.returns_param if facts is not None else -1

    def project_tensor_of(self, func_expr: ast.AST, ctx: Ctx) -> tuple[int, ...]:
        """The positional parameters whose tensors the function of another project module that
        ``func_expr`` names computes its result from with torch operations (``masked_ce_loss(
        logits, labels)``: both); ``()`` outside project mode, for a shadowed name, or when
        unknown."""
        facts = self._project_def(func_expr, ctx)
        return facts.tensor_of if facts is not None else ()

    def _project_def(self, func_expr: ast.AST, ctx: Ctx):
        lookup = self.project_defs
        if lookup is None:
            return None
        parts = self._import_chain(func_expr, ctx)
        if parts is None:
            return None
        key = ("project_def", parts)
        cache = self._cache
        if key not in cache:
            try:
                cache[key] = lookup(parts)
            except (Exception, RecursionError):  # the project cannot be read: unknown
                cache[key] = None
        return cache[key]

    def _import_chain(self, func_expr: ast.AST, ctx: Ctx, single: bool = False) -> tuple[str, ...] | None:
        """``("utils", "train_fn")`` for ``utils.train_fn`` when its root name is bound by a
        module-level import only (with ``single``: by one import: two imports of the name
        leave which one runs unknown); else None."""
        key = ("import_chain", id(func_expr), id(ctx.scope), single)  # (lookup without a line: the scope decides)
        cache = self._cache
        if key in cache:
            return cache[key]  # (asked for every call by several project questions)
        parts = chain_parts(func_expr)
        if parts is not None:
            bindings = self.lookup(parts[0], ctx, None)
            if not bindings or any(kind not in ("import", "unknown") or b_ctx is None
                                   or b_ctx.scope is not self.module_scope
                                   for _, kind, _, b_ctx in bindings) or (single and len(bindings) != 1):
                parts = None
        cache[key] = parts
        return parts

    def in_project(self) -> bool:
        """Project mode found XLA code in this module: functions launched XLA code of another
        module reaches, or a launch through a project's launch wrapper."""
        return bool(self.project_reached) or bool(self.project_launcher_calls())

    #: roots of libraries whose own ``spawn`` / ``run`` / ``launch`` a project wrapper's name may
    #: share (``mp.spawn``, absl's ``app.run``, Lightning Fabric's ``fabric.launch``)
    _LIBRARY_ROOTS = frozenset({"torch", "torch_xla", "builtins", "absl", "lightning", "lightning_fabric",
                                "pytorch_lightning", "accelerate", "transformers", "deepspeed", "ray", "jax",
                                "tensorflow", "fire", "typer", "click", "hydra", "submitit", "multiprocess"})

    def project_launcher_calls(self) -> list[tuple[ast.Call, Ctx]]:
        """The calls of the project's launch wrappers (:attr:`project_launchers`, matched by
        name): not a call that resolves to a library or the standard library
        (``mp.spawn(worker)`` with ``mp`` torch.multiprocessing, ``app.run(main)``), nor a
        method call on an object a library call built (``fabric = Fabric(); fabric.launch(train)``).
        Memoised."""
        found = self._cache.get("project_launcher_calls")
        if found is None:
            found = self._cache["project_launcher_calls"] = [
                (call, ctx) for call, ctx in self.calls_named(self.project_launchers)
                if not self._library_call(call, ctx)] if self.project_launchers else []
        return found

    def _library_call(self, call: ast.Call, ctx: Ctx) -> bool:
        """``call`` resolves to a library's or the standard library's function, or is a method
        call on an object every value of which a library call built."""
        q = self.call_name(call, ctx)
        if q is not None:
            root = q.split(".", 1)[0]
            return root in self._LIBRARY_ROOTS or root in sys.stdlib_module_names
        f = call.func
        if type(f) is ast.Attribute and type(f.value) in (ast.Name, ast.Attribute):
            values = self.values(f.value, ctx)
            return bool(values) and all(
                type(v) is ast.Call and c is not None
                and (self.call_name(v, c) or ".").split(".", 1)[0] in self._LIBRARY_ROOTS for v, c in values)
        return False

    def in_project_reach(self, ctx: Ctx) -> bool:
        """True when code at ``ctx`` is inside a function that launched XLA code of another
        project module reaches (directly or through the module's own calls), or that a
        project's launch wrapper launches."""
        if not (self.project_reached or self.project_launchers):
            return False
        reach = self._cache.get("project_reach")
        if reach is None:
            roots = self.project_roots()
            for call, c in self.project_launcher_calls():  # backend.launch(_worker, ...)
                target = self.kwarg(call, "fn", 0)
                if isinstance(target, ast.AST):
                    roots += self.function_of(target, c)
            reach = self._cache["project_reach"] = self.reachable(roots)
        func = ctx.func
        while func is not None:
            if id(func) in reach:
                return True
            func = func.ctx.func
        return False

    def is_launched(self, ctx: Ctx, multi_only: bool = False) -> bool:
        func = ctx.func
        return func is not None and id(func) in self.launched(multi_only)

    def launch_targets(self) -> list[FunctionInfo]:
        """Every function a launcher starts (built once; do not modify)."""
        found = self._cache.get("launch_targets")
        if found is None:
            found = self._cache["launch_targets"] = [t for _, _, targets, _ in self.launches() for t in targets]
        return found

    def launch_target_ids(self) -> frozenset[int]:
        """ids of :meth:`launch_targets`, for a membership test per query (built once)."""
        found = self._cache.get("launch_target_ids")
        if found is None:
            found = self._cache["launch_target_ids"] = frozenset(id(t) for t in self.launch_targets())
        return found

    def launch_shared_param(self, func: FunctionInfo, name: str) -> bool:
        """``name`` is a parameter of multi-process launch target ``func`` (a module-level
        function) other than the process index (:meth:`is_launch_index`), the module names
        ``func`` only in launches (no direct call, not handed on) and no other project module
        calls it: every process receives a copy of the one value the launching
        process passed (``torch_xla.launch(_mp_fn, args=(args,))``), the same in each.
        Memoised per function."""
        key = ("launch_shared", id(func))
        found = self._cache.get(key)
        if found is None:
            launches = [call for call, _, targets, single in self.launches()
                        if not single and any(t is func for t in targets)]
            found = self._cache[key] = bool(launches) and func.cls is None and func.ctx is not None \
                and func.ctx.func is None and not self.calls_of(func) and not self._escaped(func, len(launches))
        if not found or name not in func.params or self.is_launch_index(func, name):
            return False
        return self.project_arguments(func, name) == []  # no other module calls it directly

    def is_launch_index(self, func: FunctionInfo, name: str) -> bool:
        """``name`` is the parameter of launch target ``func`` that receives the process
        index: its first parameter, or the first one a ``functools.partial(f, cfg)`` given
        to the launcher leaves open; in project mode also a parameter every caller where XLA
        code runs fills with the index (``backend.setup(index)`` in another module's
        launched ``worker(index, backend)``: :meth:`project_param_fact`)."""
        index = self._cache.get("launch_index")
        if index is None:
            index = self._cache["launch_index"] = set()
            for call, ctx, targets, _ in self.launches():
                target = self.kwarg(call, "fn", 0)
                bound, keywords = 0, set()
                while type(target) is ast.Call and self.qualname(target.func, ctx) == "functools.partial" \
                        and target.args:
                    bound += len(target.args) - 1
                    keywords |= {k.arg for k in target.keywords if k.arg}
                    target = target.args[0]
                for t in targets:
                    free = [p for p in t.params if p not in keywords]
                    if t.cls is not None and free and free[0] in ("self", "cls"):
                        free = free[1:]
                    if bound < len(free):
                        index.add((id(t), free[bound]))
        if (id(func), name) in index:
            return True
        fact = self.project_param_fact(func, name) if self.project_callers is not None else None
        return fact is not None and fact.kind == "launch_index"

    def project_param_fact(self, func: FunctionInfo, name: str):
        """Project mode: the one :class:`flake8_xla.project.callers.ArgFacts` every call of
        ``func`` (a top-level function or a method of a top-level class) from other modules
        passes for parameter ``name``, where XLA code runs (the callers' parameters handed on
        followed back), when they agree; else ``None``. Memoised."""
        key = ("paramfact", id(func), name)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        qual = self.function_quals().get(id(func))
        if qual is None or name not in func.params or func.ctx.func is not None \
                or (func.cls is not None and func.cls.ctx.func is not None):
            return None
        index = func.params.index(name)
        if func.cls is not None and not any(type(d) is ast.Name and d.id == "staticmethod"
                                            for d in func.node.decorator_list):
            index -= 1  # (a static method's callers fill its first parameter)
            if func.name == "__init__":
                qual = func.cls.name
        try:
            calls = self.project_callers(qual, partial=True, xla_only=True)
        except (Exception, RecursionError):
            return None
        facts = [c.argument(index, name) for c in calls or ()]
        if not facts or any(f is None for f in facts) or any(f != facts[0] for f in facts):
            return None
        cache[key] = facts[0]
        return facts[0]

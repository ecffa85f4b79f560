"""Instance state and generators across the methods of one module's classes.

- ``self.<attr>`` set in one method (``__init__``, ``setup()``) is known in every method of
  the class, its bases and its subclasses in the module (:meth:`Attributes.self_attr_values`);
- ``self.m()`` in a method of a base class may run a subclass's override
  (:meth:`Attributes.self_method_overrides`);
- a generator function of the module is what it yields (:meth:`Attributes.generator_yields`),
  and a loop over one draws from what its own loops iterate.

Everything is memoised per (class, attribute), per (class, method name) and per function;
indexes over the module's classes are built once, so that many attributes, many methods and
deep hierarchies cost linear work. Nothing here imports or runs the linted code; whatever
cannot be seen is unknown (``None``).
"""

from __future__ import annotations

import ast

from .scopes import ClassInfo, Ctx, FunctionInfo

#: more binding classes than this for one attribute name in one hierarchy: unknown
_MAX_BINDERS = 32
#: a class hierarchy larger than this asks only the classes that define a method themselves
_MAX_HIERARCHY = 64


class Attributes:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    # -- self.<attr> ----------------------------------------------------------------------------

    def self_attr_values(self, cls: ClassInfo, attr: str) -> list[tuple[ast.AST, Ctx]] | None:
        """What ``self.<attr>`` may hold in a method of ``cls``: every ``self.<attr> = value``
        of the classes of ``cls``'s hierarchy in the module (its bases and mixins, its
        subclasses and their other bases: an instance of a subclass runs the base's methods),
        as ``(value, ctx)`` in walk order; ``None`` when unknown.

        Unknown when nothing in the hierarchy binds it, when some binding cannot be seen
        (``self.x += 1``, tuple unpacking of a call, ``for self.x in ...``), or when the
        bindings sit in more than one method and do not agree: the same expression, reading
        only module-level names (``torch_xla.device()`` in ``__init__`` and in ``reset``).
        A ``self.x = None`` placeholder beside other bindings is dropped (``self.model =
        None`` in ``__init__``, set in ``setup()``). Within one method every binding counts,
        as for a plain name (``if cpu: self.device = "cpu" else: self.device = ...``).
        Memoised per (class, attribute); do not modify the list returned."""
        key = ("selfattr", id(cls), attr)
        cache = self._cache
        if key in cache:
            return cache[key]
        binders = self._attr_binders().get(attr, ())
        if len(binders) > _MAX_BINDERS:  # (bounded: many unrelated classes binding one name)
            comp = self._class_component(cls)
            binders = [k for k in binders if self._class_component(k) == comp]
            found = None if len(binders) > _MAX_BINDERS else self._agreeing_bindings(binders, attr)
        else:
            comp = self._class_component(cls)
            found = self._agreeing_bindings([k for k in binders if self._class_component(k) == comp], attr)
        cache[key] = found
        return found

    def _settle_attr_aliases(self) -> None:
        """Fill :attr:`_attr_aliases`: ``(class id, attr) -> qualname`` for each ``self.<attr>``
        every binding of which in the class's hierarchy (:meth:`self_attr_values`) is one
        import chain (``self._xm = xm``, ``self.sync = torch_xla.sync``), so that
        ``self._xm.mark_step()`` resolves like ``xm.mark_step()``; the methods' ``self``
        becomes resolvable. Runs once after the walk (and after the parameter aliases)."""
        resolvable = self.resolvable
        candidates = set()
        for cls in self.classes:
            for attr, recs in cls.attrs.items():
                for v, _ in recs:
                    root = v
                    while type(root) is ast.Attribute:
                        root = root.value
                    if type(root) is ast.Name and root.id in resolvable:
                        candidates.add(attr)
        if not candidates:
            return
        table: dict[tuple[int, str], str] = {}  # (class hierarchy id, attr) -> qualname
        binders = self._attr_binders()
        for attr in candidates:
            by_comp: dict[int, list] = {}
            for b in binders.get(attr, ()):
                by_comp.setdefault(self._class_component(b), []).append(b)
            for comp, group in by_comp.items():
                # what self_attr_values answers for every class of the hierarchy (one pass per attribute)
                vals = self._agreeing_bindings(group, attr) if len(group) <= _MAX_BINDERS else None
                if not vals:
                    continue
                found = None
                for v, c in vals:
                    q = self.qualname(v, c) if type(v) in (ast.Name, ast.Attribute) else None
                    if q is None or (found is not None and q != found):
                        found = None
                        break
                    found = q
                if found is not None:
                    table[(comp, attr)] = found
        if not table:
            return
        aliased = {comp for comp, _ in table}
        for cls in self.classes:
            if self._class_component(cls) in aliased:
                for m in cls.methods.values():
                    if m.params and not _static(m):
                        resolvable.add(m.params[0])
        self._attr_aliases = table

    def attr_alias(self, root: ast.Name, attr: str, ctx: Ctx) -> str | None:
        """The import ``self.<attr>`` holds in the method ``ctx`` is in (``root`` its
        ``self``), else None (:meth:`_settle_attr_aliases`)."""
        func = ctx.func
        if func is None or func.cls is None or not func.params or func.params[0] != root.id or _static(func):
            return None
        return self._attr_aliases.get((self._class_component(func.cls), attr))

    def self_attr_bindings(self, cls: ClassInfo, attr: str) -> list[tuple[ast.AST, Ctx]] | None:
        """Every ``self.<attr> = value`` of ``cls``'s hierarchy in the module, as ``(value,
        ctx)`` in walk order, whether or not they agree (:meth:`self_attr_values` answers
        unknown when they do not); ``None`` when nothing binds it, some binding cannot be
        seen, or more than ``_MAX_BINDERS`` classes bind it. For a rule asking whether any
        binding places the attribute elsewhere (a CPU copy made in another method)."""
        comp = self._class_component(cls)
        binders = [k for k in self._attr_binders().get(attr, ()) if self._class_component(k) == comp]
        if not binders or len(binders) > _MAX_BINDERS:
            return None
        assigned = [rec for k in binders for rec in k.attrs[attr]]
        if any(v is None or c is None for v, c in assigned):
            return None
        return assigned

    def _agreeing_bindings(self, binders: list[ClassInfo], attr: str):
        assigned = [rec for k in binders for rec in k.attrs[attr]]
        if not assigned or any(v is None or c is None for v, c in assigned):
            return None
        if len(assigned) > 1:
            real = [(v, c) for v, c in assigned if not (type(v) is ast.Constant and v.value is None)]
            if real:
                assigned = real
        methods = {id(c.func) for _, c in assigned}
        if len(methods) > 1:
            dumps = {ast.dump(v) for v, _ in assigned}
            if len(dumps) != 1 or not all(self._module_level_only(v, c) for v, c in assigned):
                return None  # rebound differently in another method: unknown
        return assigned

    def _module_level_only(self, value: ast.AST, ctx: Ctx) -> bool:
        """Every name ``value`` reads is a builtin or bound at module level (an import, a
        constant, a class): the same text means the same thing in every method."""
        for node in ast.walk(value):
            if type(node) is ast.Name:
                bindings = self.lookup(node.id, ctx, None)
                if bindings and any(b_ctx is None or b_ctx.scope is not self.module_scope
                                    for _, _, _, b_ctx in bindings):
                    return False
            elif type(node) in (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp):
                return False
        return True

    def _attr_binders(self) -> dict[str, list[ClassInfo]]:
        """attribute name -> the classes of the module that bind ``self.<name>`` (built once)."""
        found = self._cache.get("attr_binders")
        if found is None:
            found = {}
            for cls in self.classes:
                for attr in cls.attrs:
                    found.setdefault(attr, []).append(cls)
            self._cache["attr_binders"] = found
        return found

    def _class_component(self, cls: ClassInfo) -> int:
        """The id of the class hierarchy ``cls`` belongs to: classes joined by naming each
        other as bases in the module (its bases, subclasses, their mixins) share one (one
        union-find over the module's classes, built once)."""
        table = self._cache.get("class_components")
        if table is None:
            parent: dict[int, int] = {id(c): id(c) for c in self.classes}

            def find(x: int) -> int:
                while parent[x] != x:
                    parent[x] = parent[parent[x]]
                    x = parent[x]
                return x

            for c in self.classes:
                for b in self._class_bases(c):
                    ra, rb = find(id(c)), find(id(b))
                    if ra != rb:
                        parent[ra] = rb
            table = self._cache["class_components"] = {i: find(i) for i in parent}
        return table.get(id(cls), id(cls))

    #: what may be done to a module held in ``self.<attr>`` without moving it or handing it on
    _KEEPS_PLACE = frozenset({
        "parameters", "named_parameters", "train", "eval", "zero_grad", "state_dict", "load_state_dict",
        "forward", "modules", "named_modules", "children", "named_children", "requires_grad_",
    })

    def host_attr_module(self, expr: ast.AST, ctx: Ctx):
        """``(store target, ctx)`` of the one binding of ``self.<attr>`` (``expr``, read in a
        method) when it builds a module on the host (:meth:`~.runtime.Runtime.host_built`)
        and nothing in the module can move it: every read of ``.<attr>`` anywhere is
        ``self.<attr>`` in a method of the same class hierarchy, called (``self.model(x)``)
        or asked only what keeps its place (``.parameters()``, ``.train()``, ...); no class of
        the hierarchy is itself a module (``self.to(dev)`` would move it). ``None`` otherwise
        (unknown: moved, handed to a call, aliased, read from outside). Memoised per
        (class, attribute)."""
        func = ctx.func
        if type(expr) is not ast.Attribute or type(expr.value) is not ast.Name or func is None \
                or func.cls is None or not func.params or expr.value.id != func.params[0]:
            return None
        key = ("host_attr", id(func.cls), expr.attr)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        values = self.self_attr_values(func.cls, expr.attr)
        if not values or len(values) != 1 or not self.host_built(*values[0]):
            return None
        value, vctx = values[0]
        comp = self._class_component(func.cls)
        if any(self.is_module_class(c) for c in self._component_members().get(comp, ())):
            return None
        target = None
        for node, parent, grand, f in self._attribute_uses().get(expr.attr, ()):
            if f is None or f.cls is None or not f.params or node.value.id != f.params[0]:
                return None  # trainer.model read from outside, or another object's attribute
            if self._class_component(f.cls) != comp:
                continue  # another hierarchy's own self.<attr>
            if type(node.ctx) is ast.Store:
                if type(parent) is ast.Assign and parent.value is value:
                    target = node
                continue  # (every binding is in ``values``)
            if type(node.ctx) is not ast.Load:
                return None
            if type(parent) is ast.Call and parent.func is node:
                continue  # self.model(x)
            if type(parent) is ast.Attribute and parent.attr in self._KEEPS_PLACE \
                    and type(grand) is ast.Call and grand.func is parent:
                continue
            return None  # moved, handed to a call, aliased, returned: unknown
        if target is None:
            return None
        cache[key] = found = (target, vctx)
        return found

    def _attribute_uses(self) -> dict[str, list]:
        """attribute name -> ``(node, parent, grandparent, enclosing FunctionInfo or None)`` of
        every ``x.<name>`` whose ``x`` is a plain name, in the whole module (one walk, built
        on the first question)."""
        found = self._cache.get("attribute_uses")
        if found is None:
            found = {}
            funcs = {id(f.node): f for f in self.functions}
            todo = [(self.tree, None, None, None)]
            while todo:
                node, parent, grand, func = todo.pop()
                if type(node) is ast.Attribute and type(node.value) is ast.Name:
                    found.setdefault(node.attr, []).append((node, parent, grand, func))
                inner = funcs.get(id(node), func)
                for child in ast.iter_child_nodes(node):
                    todo.append((child, node, parent, inner))
            self._cache["attribute_uses"] = found
        return found

    # -- self.m() in a base class ---------------------------------------------------------------

    def self_method_overrides(self, cls: ClassInfo, name: str) -> list[FunctionInfo]:
        """What ``self.name(...)`` in a method of ``cls`` may run besides what ``cls`` itself
        resolves ``name`` to, when ``self`` is an instance of a subclass of ``cls`` in the
        module: the method each subclass resolves ``name`` to through its own MRO (a base
        class's step loop calling ``self.training_step`` runs the subclass's override, or a
        mixin's that the subclass lists first). Walk order, each method once. Memoised per
        (class, name). In a hierarchy of more than ``_MAX_HIERARCHY`` classes only classes
        defining ``name`` themselves are asked, and none when more than ``_MAX_BINDERS`` do
        (a missed override only hides code: it never makes a finding)."""
        key = ("overrides", id(cls), name)
        found = self._cache.get(key)
        if found is None:
            found = []
            own = self._method_table(cls).get(name)
            members = self._component_members().get(self._class_component(cls), ())
            if len(members) > _MAX_HIERARCHY:
                members = self._methods_by_name().get(name, ())
                if len(members) > _MAX_BINDERS:
                    members = ()
            for c in members:
                if c is cls or cls not in self.mro(c):
                    continue
                m = self._method_table(c).get(name)
                if m is not None and m is not own and m not in found:
                    found.append(m)
            self._cache[key] = found
        return found

    def _component_members(self) -> dict[int, list[ClassInfo]]:
        """hierarchy id (:meth:`_class_component`) -> its classes, in walk order (built once)."""
        found = self._cache.get("component_members")
        if found is None:
            found = {}
            for cls in self.classes:
                found.setdefault(self._class_component(cls), []).append(cls)
            self._cache["component_members"] = found
        return found

    def hook_methods(self, call: ast.Call, ctx: Ctx) -> list[FunctionInfo]:
        """The overrides a ``self.m(...)`` call in a method of class ``B`` runs on an instance
        of a class of the module that is built here (``T(...)``) and has ``B`` in its MRO:
        the method such a class resolves ``m`` to, when it is not ``B``'s own (a mixin's or
        a subclass's hook called by a base class's step loop). Empty for any other call."""
        f = call.func
        func = ctx.func
        if type(f) is not ast.Attribute or type(f.value) is not ast.Name or func is None or func.cls is None \
                or not func.params or f.value.id != func.params[0] or _static(func):
            return []
        key = ("hooks", id(func.cls), f.attr)
        found = self._cache.get(key)
        if found is None:
            found = []
            built = self._built_classes()
            for m in self.self_method_overrides(func.cls, f.attr):
                if any(id(c) in built and func.cls in self.mro(c) and self._method_table(c).get(f.attr) is m
                       for c in self._component_members().get(self._class_component(func.cls), ())):
                    found.append(m)
            self._cache[key] = found
        return found

    def _built_classes(self) -> frozenset[int]:
        """ids of the module's classes called by name somewhere (``Trainer(...)``; built once)."""
        found = self._cache.get("built_classes")
        if found is None:
            names = {c.name for c in self.classes}
            ids = set()
            for call, ctx in self.calls:
                if type(call.func) is ast.Name and call.func.id in names:
                    cls = self.class_named(call.func.id, ctx)
                    if cls is not None:
                        ids.add(id(cls))
            found = self._cache["built_classes"] = frozenset(ids)
        return found

    def _methods_by_name(self) -> dict[str, list[ClassInfo]]:
        """method name -> the classes of the module that define it (built once)."""
        found = self._cache.get("methods_by_name")
        if found is None:
            found = {}
            for cls in self.classes:
                for name in cls.methods:
                    found.setdefault(name, []).append(cls)
            self._cache["methods_by_name"] = found
        return found

    # -- generators -----------------------------------------------------------------------------

    def generator_yields(self, func: FunctionInfo) -> list[tuple[ast.AST, Ctx]] | None:
        """``(value, ctx)`` of each ``yield value`` of a generator function of the module (not
        of the functions and classes nested in it); ``None`` when ``func`` is no generator,
        yields nothing visible (a bare ``yield``) or delegates (``yield from``). Read from the
        walk's index of yields (:attr:`Model.yields`: dead code is not walked), memoised per function."""
        key = ("yields", id(func))
        cache = self._cache
        if key in cache:
            return cache[key]
        found: list | None = []
        inner = Ctx(func.scope, func, (), ()) if func.scope is not None else None
        for node in self.yields.get(id(func), ()):  # (the walk's: nested defs, classes, lambdas left out)
            if type(node) is ast.YieldFrom or node.value is None or inner is None:
                found = None
                break
            found.append((node.value, inner))
        if found is not None:
            found.sort(key=lambda rec: (rec[0].lineno, rec[0].col_offset))
            if not found:
                found = None
        cache[key] = found
        return found

    def generator_loops(self, func: FunctionInfo) -> list:
        """The ``for`` loops of a generator function (not of nested functions) whose body
        yields: what the generator draws its items from (:class:`~.scopes.LoopInfo`, walk
        order; memoised)."""
        key = ("genloops", id(func))
        found = self._cache.get(key)
        if found is None:
            found = []
            yields = self.generator_yields(func) or ()
            for loop in self._loops_by_func().get(id(func), ()):
                node = loop.node
                if type(node) in (ast.For, ast.AsyncFor) and any(
                        _within(v, node) for v, _ in yields):
                    found.append(loop)
            self._cache[key] = found
        return found

    def generator_loader_kind(self, call: ast.Call, ctx: Ctx, func: FunctionInfo, depth: int):
        """:meth:`~.loaders.Loaders.loader_kind` of ``call``, a call of generator function
        ``func``: what every loop of ``func`` that yields iterates (a parameter it iterates
        maps back to the call's argument), when they all agree; ``None`` when ``func``
        yields outside such a loop or cannot be seen. ``False`` when ``func`` is no
        generator (the caller goes on)."""
        yields = self.generator_yields(func)
        if yields is None:
            key = ("has_yield", id(func))
            if key not in self._cache:
                self._cache[key] = _has_yield(func)
            return None if self._cache[key] else False
        loops = self.generator_loops(func)
        if not loops or any(not any(_within(v, lp.node) for lp in loops) for v, _ in yields):
            return None  # yields outside its loops (`yield next(it)`, a first batch)
        kinds = []
        for loop in loops:
            kind = self.loader_kind(loop.node.iter, loop.ctx, depth + 1)
            if type(kind) is tuple and kind[1] is func:  # iterates its parameter: the argument
                arg = self.argument_for(call, ctx, func, kind[2])
                kind = self.loader_kind(arg, ctx, depth + 1) if isinstance(arg, ast.AST) else None
            kinds.append(kind)
        return self._agree(kinds)

    def generator_syncs_per_item(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> bool:
        """``expr`` (a loop's iterable) calls a generator function of the module, directly or
        through ``enumerate`` / ``zip`` / ``tqdm`` / ``islice``, whose every ``yield`` lies in
        a loop that cuts the graph each iteration (:meth:`~.syncs.Syncs.loop_syncs`:
        ``yield x.to(dev); torch_xla.sync()``): each item the consumer draws runs one sync,
        so a loop over it is synced per step. Memoised per generator function."""
        if type(expr) is not ast.Call or _depth > 4:
            return False
        q = self.call_name(expr, ctx)
        inner = self._wrapped_iterables(expr, ctx, q)
        if inner is not None:
            return any(self.generator_syncs_per_item(e, ctx, _depth + 1) for e in inner)
        if q is not None or type(expr.func) is not ast.Name:
            return False
        funcs = self.function_of(expr.func, ctx)
        if len(funcs) != 1:
            return False
        func = funcs[0]
        key = ("gen_syncs", id(func))
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # (a generator drawing from itself)
            yields = self.generator_yields(func)
            loops = self.generator_loops(func) if yields else ()
            found = bool(loops) and all(self.loop_syncs(lp) for lp in loops) \
                and all(any(_within(v, lp.node) for lp in loops) for v, _ in yields)
            self._cache[key] = found
        return found

    def generator_items_on_device(self, call: ast.Call, ctx: Ctx) -> bool:
        """``call`` calls a generator function of the module whose every ``yield`` yields a
        tensor visibly on the XLA device (``yield b.to(dev)``, a device loader's batch):
        a loop over it is fed device data. Memoised per generator function."""
        if type(call.func) is not ast.Name or self.call_name(call, ctx) is not None:
            return False
        funcs = self.function_of(call.func, ctx)
        if len(funcs) != 1:
            return False
        func = funcs[0]
        key = ("gen_device", id(func))
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # (a generator iterating itself)
            yields = self.generator_yields(func)
            found = bool(yields) and all(self.tensor_kind(v, c) == "device" for v, c in yields)
            self._cache[key] = found
        return found

    def drawn_targets(self, it: ast.AST, target: ast.AST, ctx: Ctx) -> list[tuple[ast.AST, str]]:
        """What a ``for target in it`` loop binds, where :meth:`loop_targets` cannot see it by
        the loader alone: ``(target part, "host" | "device")`` for ``zip(tqdm(range(n)),
        cycle(loader))`` (a counter is a host value, never replica data; a device loader's
        batch is on the device) and for a generator of the module that yields device
        tensors. Empty when nothing is seen."""
        if type(it) is not ast.Call:
            return []
        f = it.func
        if type(f) is ast.Name and f.id == "zip" and self.lookup("zip", ctx, None) is None:
            if type(target) not in (ast.Tuple, ast.List) or len(target.elts) != len(it.args) \
                    or any(type(a) is ast.Starred for a in it.args) or it.keywords:
                return []
            out = []
            for arg, elt in zip(it.args, target.elts):
                if self._counter(arg, ctx):
                    out.append((elt, "host"))
                elif type(elt) is ast.Name and (self.loader_kind(arg, ctx) == "device"
                                                or (type(arg) is ast.Call and self.generator_items_on_device(arg, ctx))):
                    out.append((elt, "device"))
            return out
        if self.generator_items_on_device(it, ctx):
            return [(target, "device")]
        return []

    def dict_loop_value(self, scope, name: str, line: int) -> str | None:
        """``"device"`` when ``name`` is the value target of ``for k, name in d.items():`` or
        ``for name in d.values():`` (the loop header at ``line`` in ``scope``) and ``d`` holds
        device tensors: a device value itself (a model's dict of losses, ``losses =
        model(images, targets)``), or a name every binding of which is a dict display
        (``{"ce": ce, "l2": l2}``) or ``dict(ce=ce, ...)`` whose values are all device tensors.
        Else None (unknown). Memoised per loop."""
        index = self._cache.get("dictloops")
        if index is None:
            index = self._cache["dictloops"] = {}
            for loop in self.loops:
                node = loop.node
                it, target = getattr(node, "iter", None), getattr(node, "target", None)
                if type(it) is not ast.Call or it.args or it.keywords or type(it.func) is not ast.Attribute:
                    continue
                if it.func.attr == "items" and type(target) in (ast.Tuple, ast.List) and len(target.elts) == 2 \
                        and type(target.elts[1]) is ast.Name:
                    value = target.elts[1]
                elif it.func.attr == "values" and type(target) is ast.Name:
                    value = target
                else:
                    continue
                index[(id(loop.ctx.scope), value.id, node.lineno)] = (it.func.value, loop)
        found = index.get((id(scope), name, line))
        if found is None:
            return None
        mapping, loop = found
        key = ("dictloopkind", id(loop))
        if key not in self._cache:
            self._cache[key] = None  # (a cycle: unknown)
            self._cache[key] = "device" if self._device_dict(mapping, loop.ctx) else None
        return self._cache[key]

    def _device_dict(self, expr: ast.AST, ctx: Ctx) -> bool:
        if self.tensor_kind(expr, ctx) == "device":
            return True
        if type(expr) is not ast.Name:
            return False
        bindings = self.lookup(expr.id, ctx, getattr(expr, "lineno", None))
        if not bindings:
            return False
        for _, kind, target, b_ctx in bindings:
            if kind != "value":
                return False
            c = b_ctx or ctx
            if type(target) is ast.Dict and target.values and None not in target.keys:
                values = target.values
            elif type(target) is ast.Call and type(target.func) is ast.Name and target.func.id == "dict" \
                    and self.lookup("dict", c, None) is None and not target.args and target.keywords \
                    and all(kw.arg is not None for kw in target.keywords):
                values = [kw.value for kw in target.keywords]
            else:
                return False
            if not all(self.tensor_kind(v, c) == "device" for v in values):
                return False
        return True

    def _counter(self, expr: ast.AST, ctx: Ctx) -> bool:
        """``range(n)``, ``itertools.count()``, ``tqdm(range(n))`` / ``trange(n)``: host integers."""
        for _ in range(4):
            if type(expr) is not ast.Call:
                return False
            q = self.call_name(expr, ctx)
            f = expr.func
            if q is None and type(f) is ast.Name and f.id == "range" and self.lookup("range", ctx, None) is None:
                return True
            if q == "itertools.count" or (q is not None and q.split(".", 1)[0] == "tqdm" and q.endswith(".trange")):
                return True
            if q is not None and q.split(".", 1)[0] == "tqdm" and q.rsplit(".", 1)[1] in ("tqdm", "tqdm_notebook") \
                    and expr.args:
                expr = expr.args[0]
                continue
            return False
        return False

    def _loops_by_func(self) -> dict[int, list]:
        found = self._cache.get("loops_by_func")
        if found is None:
            found = {}
            for loop in self.loops:
                if loop.ctx.func is not None:
                    found.setdefault(id(loop.ctx.func), []).append(loop)
            self._cache["loops_by_func"] = found
        return found


def _within(expr: ast.AST, stmt: ast.AST) -> bool:
    """``expr`` lies inside the body of loop ``stmt`` (by position)."""
    body = stmt.body
    if not body:
        return False
    start = (body[0].lineno, body[0].col_offset)
    last = body[-1]
    end = (getattr(last, "end_lineno", None) or last.lineno, getattr(last, "end_col_offset", None) or 0)
    return start <= (expr.lineno, expr.col_offset) <= end


def _has_yield(func: FunctionInfo) -> bool:
    """``func``'s own body (not nested functions) holds a ``yield`` or ``yield from``."""
    todo = list(func.node.body)
    while todo:
        node = todo.pop()
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if t in (ast.Yield, ast.YieldFrom):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _static(func: FunctionInfo) -> bool:
    """A ``@staticmethod`` (its first parameter is no instance)."""
    return any(type(d) is ast.Name and d.id == "staticmethod" for d in func.node.decorator_list)

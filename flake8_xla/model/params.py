"""Parameters: what flows into a parameter is the union of what every call passes.

Within the module, :meth:`~flake8_xla.model.values.Values.passed_arguments` gives every call
site's argument; in project mode, :meth:`Params.project_arguments` adds what the calls in
other project modules pass (:func:`flake8_xla.project.callers_lookup`). On top of both:

- a parameter bound to an import at every call site resolves like that import
  (``train_fn(loader, model, xm)`` makes ``xm.optimizer_step`` inside
  ``torch_xla.core.xla_model.optimizer_step``): :meth:`Params.param_alias`.

Union semantics: a question about a parameter holds only when it holds for what every
call passes. A parameter with no visible call, a call that passes none (the default) or
hides it in a splat, a function handed on as a value (its callers are unseen), and a
caller that cannot be read all make the parameter unknown, and unknown never fires.
"""

from __future__ import annotations

import ast

from .names import canonical
from .scopes import UNKNOWN, Ctx, FunctionInfo

#: rounds of passing a parameter on (``train_fn(xm)`` calls ``step(xm)``) followed in-module
_ALIAS_ROUNDS = 4


class Params:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def project_arguments(self, func: FunctionInfo, name: str) -> list | None:
        """What the calls in other project modules pass for parameter ``name`` of module-level
        function ``func``: one :class:`~flake8_xla.project.callers.ArgFacts` per call.

        Returns ``[]`` when no other module calls it (or outside project mode, or for a
        method or a nested def, whose callers other modules cannot name); ``None`` when what
        some caller passes is unknown: it passes none (the default), a splat may supply it,
        the function is handed on as a value there, or the caller cannot be read.
        Memoised per (function, parameter)."""
        lookup = self.project_callers
        if lookup is None or func.cls is not None or func.ctx is None or func.ctx.func is not None:
            return []
        key = ("project_args", id(func), name)
        cache = self._cache
        if key in cache:
            return cache[key]
        qual = self.function_quals()[id(func)]
        qkey = ("project_calls", qual)
        if qkey not in cache:
            cache[qkey] = self._project_calls(lookup, qual)
        calls = cache[qkey]
        if calls is None:
            cache[key] = None
            return None
        index = func.params.index(name) if name in func.params else None
        out = []
        for cf in calls:
            arg = cf.argument(index, name)
            if arg is None:
                cache[key] = None
                return None
            out.append(arg)
        cache[key] = out
        return out

    def _project_calls(self, lookup, qual: str):
        """``lookup(qual)`` (the calls of other project modules of this module's ``qual``),
        through the module's stored answers (a warm run of an unchanged project: as stored)."""
        answers = self.project_answers
        name = f"calls:{qual}"
        if answers is not None:
            got = answers.get(name)
            if got is None:
                return None  # (stored: unknown)
            if type(got) in (list, tuple) and all(type(c).__name__ == "CallFacts" for c in got):
                return tuple(got)
        try:
            found = lookup(qual)
        except (Exception, RecursionError):  # a project that cannot be read: unknown
            found = None
        if found is None or type(found) is tuple:
            self.store_answer(name, found)
        return found

    def project_arguments_seen(self, func: FunctionInfo, name: str) -> tuple:
        """What the calls in other project modules that can be read pass for parameter
        ``name`` of ``func``, a function or a method of a top-level class (a dispatched
        method call included: ``backend.save(state, path)`` on a launch wrapper's ``self``):
        one :class:`~flake8_xla.project.callers.ArgFacts` per call that passes it, for "some
        caller passes X" questions (the code that call runs is reached there). ``()``
        outside project mode. Memoised per (function, parameter)."""
        lookup = self.project_callers
        if lookup is None or func.ctx is None or func.ctx.func is not None \
                or (func.cls is not None and func.cls.ctx.func is not None) or name not in func.params:
            return ()
        key = ("project_args_seen", id(func), name)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = ()
        qual = self.function_quals()[id(func)]
        index = func.params.index(name)
        if func.cls is not None:
            index -= 1  # the callers' arguments come without self
            if func.name == "__init__":
                qual = func.cls.name
        try:
            calls = lookup(qual, partial=True) or ()
        except (Exception, RecursionError):  # a project that cannot be read: unknown
            calls = ()
        found = cache[key] = tuple(a for a in (c.argument(index, name) for c in calls) if a is not None)
        return found

    def param_alias(self, func: FunctionInfo, name: str) -> str | None:
        """The canonical dotted name parameter ``name`` of ``func`` holds when every call, in
        the module and (project mode) in other project modules, passes a name bound to the
        same import (``xm`` -> ``torch_xla.core.xla_model``); ``None`` otherwise (see the
        module docstring: no call, a default, a splat, an escape, disagreeing callers).
        Plain functions only (not methods). Settled once, right after the walk."""
        return self._param_aliases.get((id(func), name))

    def param_tensor_kind(self, func: FunctionInfo, name: str, depth: int = 0) -> str | None:
        """``"device"`` when every call of plain function ``func`` passes a device tensor for
        parameter ``name``: its calls in the module (:meth:`~.values.Values.param_arguments`)
        and in project mode those of other modules (:meth:`project_arguments`: a loss helper
        the step of another module calls), at least one call; else ``None`` (unknown: no
        call, a default, a splat, a host or unknown argument at some call, callers that
        cannot be read). Memoised per (function, parameter)."""
        key = ("param_tk", id(func), name)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None  # a cycle of calls: unknown
        args = self.param_arguments(func, name)
        if args is None and not self.passed_arguments(func, name) and not self._escaped(func, 0):
            args = []  # no call in the module (and not handed on there): the project's callers say
        found = None
        if args is not None and all(self.tensor_kind(a, c, depth) == "device" for a, c in args):
            project = self.project_arguments(func, name)  # (the project asked last: it reads other modules)
            if project is not None and (args or project) and all(a.kind == "device_tensor" for a in project):
                found = "device"  # (the callers of other modules too: a loss helper of another module)
        cache[key] = found
        return found

    def project_method_param_kind(self, func: FunctionInfo, name: str) -> str | None:
        """Project mode: ``"device"`` when method ``func`` (of a top-level class) is called by
        other modules only, at least once, every such call passing a device tensor for
        parameter ``name`` (:meth:`project_arguments`: a ``training_step(batch, i)`` a
        framework's launched loop calls on the user's module, with batches of a device
        loader); ``None`` when the module calls it itself or anything else is passed.
        Memoised per (method, parameter)."""
        key = ("method_param_tk", id(func), name)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None
        found = None
        qual = self.function_quals().get(id(func))
        if qual is not None and qual.count(".") == 1 and name in func.params[1:] \
                and not self.calls_named((func.name,)):
            try:
                calls = self.project_callers(qual)
            except (Exception, RecursionError):  # a project that cannot be read: unknown
                calls = None
            index = func.params.index(name) - 1
            args = [cf.argument(index, name) for cf in calls or ()]
            if args and all(a is not None and a.kind == "device_tensor" for a in args):
                found = "device"
        cache[key] = found
        return found

    def every_caller_passes(self, func: FunctionInfo, name: str, local, project_kind: str) -> bool:
        """Every call of module-level function ``func`` passes, for parameter ``name``,
        what ``local(expr, ctx, call)`` accepts (calls in the module) or an argument of
        ``project_kind`` (:class:`~flake8_xla.project.callers.ArgFacts` of calls in other
        project modules), and there is at least one call. False (unknown) for a method or a
        nested def, a call that passes none (the default) or hides it in a splat, a function
        also read as a value in the module (its callers are unseen), and callers in other
        modules that cannot be read. Not memoised: ``local`` differs per question."""
        if func.cls is not None or func.ctx is None or func.ctx.func is not None:
            return False
        passed = self.passed_arguments(func, name)
        if self._escaped(func, len(passed)):
            return False
        if not all(isinstance(arg, ast.AST) and arg is not UNKNOWN and local(arg, cctx, call)
                   for arg, call, cctx in passed):
            return False  # (the module's own calls first: the project's reads other modules)
        project = self.project_arguments(func, name)
        if project is None or not (passed or project):
            return False
        return all(a.kind == project_kind for a in project)

    #: methods that return the module they are called on (``model.to(dev)(x)`` runs its forward)
    _SAME_MODULE = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "bfloat16", "double",
                              "requires_grad_", "to_empty"})
    #: wrappers whose call runs the wrapped module's forward with the same arguments
    _FORWARDING_WRAPPERS = ("torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel",
                            "torch_xla.distributed.fsdp.", "torch_xla.distributed.spmd.", "torch.distributed.fsdp.",
                            "torch.compile")

    #: ``xmp.MpModelWrapper(model)``: its ``.to(device)`` gives back the wrapped module, moved
    _MP_WRAPPER = "torch_xla.distributed.xla_multiprocessing.MpModelWrapper"

    def instance_class(self, expr: ast.AST, ctx: Ctx, _depth: int = 0):
        """The class whose instance ``expr`` holds, when every value it may hold is one
        constructor call of the same class (through names, ``self.`` attributes set in
        ``__init__``, ``.to(dev)`` / ``.train()`` and the like, DDP / FSDP / ``torch.compile``
        wrappers, ``xmp.MpModelWrapper``): ``("local", ClassInfo)`` for a class of this module, ``("import", parts,
        ctx)`` for a class named through the module's imports (``("model", "TinyLlama")``);
        ``None`` when unknown or mixed. Memoised per expression."""
        key = ("instcls", id(expr))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = None  # cycles: unknown
        found = self._instance_class(expr, ctx, _depth) if _depth <= 8 else None
        cache[key] = found
        return found

    def _instance_class(self, expr, ctx, depth):
        t = type(expr)
        if t in (ast.Name, ast.Attribute):
            if self.qualname(expr, ctx) is not None:
                return None
            values = self.values(expr, ctx)
            if not values or any(v is None or c is None for v, c in values):
                return None
            found = None
            for v, c in values:
                got = self.instance_class(v, c, depth + 1)
                if got is None or (found is not None and got[:2] != found[:2]):
                    return None
                found = got
            return found
        if t is not ast.Call:
            return None
        f = expr.func
        q = self.call_name(expr, ctx)
        if q is None and type(f) is ast.Attribute and f.attr in self._SAME_MODULE:
            return self.instance_class(f.value, ctx, depth + 1)
        if q is not None and (q.startswith(self._FORWARDING_WRAPPERS) or q == self._MP_WRAPPER):
            inner = expr.args[0] if expr.args else self.kwarg(expr, "module")
            return self.instance_class(inner, ctx, depth + 1) if isinstance(inner, ast.AST) else None
        if type(f) is ast.Name:
            cls = self.class_named(f.id, ctx)
            if cls is not None:
                return ("local", cls)
        if type(f) in (ast.Name, ast.Attribute):  # (a relative import has no dotted name, but binds the class)
            parts = self._import_chain(f, ctx)
            if parts is not None:
                return ("import", parts, ctx)
        return None

    def forward_calls(self) -> dict[int, list[tuple[ast.Call, Ctx]]]:
        """``id(forward) -> [(call, ctx)]``: the calls of the module that call an instance of
        a module class of this module (``model(x)``, ``self.block(h)``), by the ``forward``
        that class's MRO runs. Built once."""
        found = self._cache.get("fwdcalls")
        if found is None:
            found = self._cache["fwdcalls"] = {}
            classes = [c for c in self.classes if "forward" in c.methods or c.node.bases]
            if classes:
                for call, ctx in self.calls:
                    f = call.func
                    if type(f) not in (ast.Name, ast.Attribute) or self.qualname(f, ctx) is not None:
                        continue
                    got = self.instance_class(f, ctx)
                    if got is None or got[0] != "local":
                        continue
                    methods = self._mro_methods(got[1], "forward")
                    if methods:
                        found.setdefault(id(methods[0]), []).append((call, ctx))
        return found

    def forward_param_device(self, func: FunctionInfo, name: str, depth: int = 0) -> bool:
        """Parameter ``name`` of ``forward`` method ``func`` of a module class receives a
        device tensor from some call of an instance: in this module (``model(x)`` with ``x``
        on the device, :meth:`forward_calls`) or, in project mode, in another project module
        (argument kind ``device_tensor`` of a call of ``Cls.forward``, or a tensor passed to an
        instance the caller's caller moved to the device: ``CallFacts.on_device``). "Some call": a module
        on the XLA device is called with device tensors (a CPU tensor there is an error), so
        the code of its ``forward`` runs on device tensors wherever it runs on the device.
        Memoised per (function, parameter)."""
        if func.cls is None or func.name != "forward" or name not in func.params or func.params.index(name) == 0:
            return False
        key = ("fwdparam", id(func), name)
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = False  # a cycle (a forward calling its own class): no
        index = func.params.index(name) - 1
        found = False
        for call, cctx in self.forward_calls().get(id(func), ()):
            arg = _forward_argument(call, index, name)
            if arg is not None and self.tensor_kind(arg, cctx, depth) == "device":
                found = True
                break
        if not found and self.project_callers is not None and func.ctx is not None and func.ctx.func is None:
            try:
                calls = self.project_callers(f"{func.cls.name}.forward", partial=True)
            except (Exception, RecursionError):  # a project that cannot be read: unknown
                calls = None
            for cf in calls or ():
                arg = cf.argument(index, name)
                if arg is not None and (arg.kind == "device_tensor" or (cf.on_device and arg.kind == "tensor")):
                    found = True  # a tensor into a module on the XLA device is on the device
                    break
        cache[key] = found
        return found

    #: builtins that give back their argument's elements (``self.callbacks = list(callbacks)``)
    _SAME_ELEMENTS = frozenset({"list", "tuple", "sorted"})

    def receiver_origin(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> tuple[FunctionInfo, str, bool] | None:
        """``(function, parameter, element)`` when every value ``expr`` may hold is what a
        parameter of a function of this module receives (``element`` False) or one element
        of it (``element`` True): through names, ``self.`` attributes, ``for cb in
        self.callbacks:`` and ``list(...)`` / ``tuple(...)`` / ``sorted(...)`` of it
        (``self.callbacks = list(callbacks or [])`` in ``__init__``). ``None`` when unknown, mixed,
        or when the parameter is ``self``. The callers of that function, in other project
        modules, say what it is (:mod:`flake8_xla.project.callers`)."""
        if _depth > 8 or expr is None:
            return None
        t = type(expr)
        if t is ast.Name:
            for lp in reversed(ctx.loops):  # a loop target read in its loop's body
                target = lp.node.target if type(lp.node) in (ast.For, ast.AsyncFor) else None
                if target is not None and type(target) is ast.Name and target.id == expr.id:
                    if expr.id in self._loop_stores(lp.node):
                        return None  # rebound in the body: mixed
                    inner = self.receiver_origin(lp.node.iter, lp.ctx, _depth + 1)
                    return (inner[0], inner[1], True) if inner is not None and not inner[2] else None
            bindings = self.read_bindings(expr, ctx)
            if not bindings or len(bindings) != 1:
                return None
            _, kind, target, b_ctx = bindings[0]
            if kind == "param" and isinstance(target, FunctionInfo):
                if target.cls is not None and target.params and target.params[0] == expr.id:
                    return None  # self
                return (target, expr.id, False) if expr.id in _all_params(target) else None
            if kind == "value" and b_ctx is not None:
                if type(target) is ast.Call and type(target.func) is ast.Attribute and target.args \
                        and type(target.args[0]) is ast.Name and target.args[0].id == expr.id \
                        and target.args[0] is not expr:
                    # module = self.strategy.setup_module(module): the object handed back (moved,
                    # maybe wrapped: its methods are still the module's own)
                    return self.receiver_origin(target.args[0], b_ctx, _depth + 1)
                return self.receiver_origin(target, b_ctx, _depth + 1)
            return None
        if t is ast.Attribute:
            if self.qualname(expr, ctx) is not None:
                return None
            single = self.single_value(expr, ctx)
            if single is None:
                return None
            return self.receiver_origin(*single, _depth + 1)
        if t is ast.Call and type(expr.func) is ast.Name and expr.func.id in self._SAME_ELEMENTS \
                and len(expr.args) == 1 and all(k.arg in ("key", "reverse") for k in expr.keywords) \
                and self.lookup(expr.func.id, ctx, None) is None:  # (sorted(cbs, key=...): the same elements)
            inner = self.receiver_origin(expr.args[0], ctx, _depth + 1)
            return inner if inner is not None and not inner[2] else None
        if t is ast.BoolOp and type(expr.op) is ast.Or and len(expr.values) == 2 \
                and type(expr.values[1]) in (ast.List, ast.Tuple) and not expr.values[1].elts:
            return self.receiver_origin(expr.values[0], ctx, _depth + 1)  # callbacks or []
        if t is ast.BoolOp and type(expr.op) is ast.Or and len(expr.values) == 2 and type(expr.values[1]) is ast.Call:
            inner = self.receiver_origin(expr.values[0], ctx, _depth + 1)  # strategy or SingleDevice():
            return inner if inner is not None and not inner[2] else None  # what a caller passes (else the default)
        return None

    def _loop_stores(self, node: ast.AST) -> frozenset[str]:
        """The names assigned anywhere in the body of loop ``node`` (one walk per loop)."""
        key = ("loopstores", id(node))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = frozenset(
                n.id for stmt in node.body for n in ast.walk(stmt) if type(n) is ast.Name and type(n.ctx) is ast.Store)
        return found

    def project_step_calls(self, func: FunctionInfo) -> tuple:
        """Project mode: the calls of other project modules that run ``func`` once per
        training step of their XLA code (``CallFacts.in_step``): a module-level function
        called in another module's step loop (``log_loss(step, loss)``), or a method
        dispatched there on this class's instances (``cb.on_step_end(self, step, loss)`` in
        the step loop of a trainer that holds them). Only for a function in XLA code whose
        own code reads a parameter the way the step rules look at (:meth:`_reads_params`),
        reads anything on the host (:meth:`_reads_on_host`) or runs a step once per call
        (:meth:`steps_once`), and for a plain function only when launched code of another
        module reaches it and the module has no torch_xla import or the function runs a
        step once per call; empty otherwise. A method's calls include a base class's
        ``self.m(...)`` in another module's step loop on an object of this class
        (``self.after_step(step)``: :func:`flake8_xla.project._self_site_calls`). Memoised
        per function."""
        params = func.params[1:] if func.cls is not None else func.params
        if self.project_callers is None or (not params and getattr(func.node.args, "kwarg", None) is None) \
                or func.scope is None \
                or func.name.startswith("__") or func.ctx is None or func.ctx.func is not None \
                or (func.cls is not None and func.cls.ctx.func is not None):
            return ()
        key = ("projstep", id(func))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = ()
        name = f"steps{self._function_index(func)}"  # (a warm run of an unchanged project: as stored)
        got = self.project_answers.get(name) if self.project_answers is not None else None
        if type(got) in (list, tuple) and all(type(c).__name__ == "CallFacts" for c in got):
            found = cache[key] = tuple(got)
            return found
        found = cache[key] = self._project_step_calls(func, params)
        self.store_answer(name, found)
        return found

    def _function_index(self, func: FunctionInfo) -> int:
        """``func``'s index in :attr:`functions` (the walk's order)."""
        index = self._cache.get("funcindex")
        if index is None:
            index = self._cache["funcindex"] = {id(f): i for i, f in enumerate(self.functions)}
        return index[id(func)]

    def _project_step_calls(self, func: FunctionInfo, params: list[str]) -> tuple:
        """:meth:`project_step_calls` past its first tests."""
        if func.cls is None and (self.function_quals().get(id(func)) not in self.project_reached
                                 or (self.uses_torch_xla and not (self.steps_once(func)
                                                                  or self._syncs_param(func, params)))):
            # a plain function: asked only when other modules' launched code reaches it, and in
            # a module with torch_xla only when it runs a training step of its own or reads a
            # parameter on the host (`loss.item()`) (asking for every function of a torch_xla
            # module would summarise most of a torch_xla project, as for parameter aliases)
            return ()
        uncalled = getattr(self.project_callers, "uncalled", None)
        if uncalled is not None and uncalled(self.function_quals()[id(func)]):
            return ()  # no other file calls its name (the project's index of called names, once built)
        if not self.in_xla_code(Ctx(func.scope, func, (), ())) or not (
                self._reads_params(func, params) or self._reads_on_host(func) or self.steps_once(func)
                or self.updates_once(func)
                or getattr(func.node.args, "kwarg", None) is not None):  # (update(self, **kwargs))
            return ()
        try:
            calls = self.project_callers(self.function_quals()[id(func)], partial=True, step_only=True) or ()
        except (Exception, RecursionError):  # a project that cannot be read: unknown
            calls = ()
        steps_once = None
        out = []
        for c in calls:
            if not c.in_step and c.in_loop:
                if steps_once is None:
                    steps_once = self.steps_once(func) or self.updates_once(func)
                if not steps_once:
                    continue
            if c.in_step or c.in_loop:
                out.append(c)
        return tuple(out)

    def steps_once(self, func: FunctionInfo) -> bool:
        """``func`` runs the backward and an optimizer update once per call, the update
        outside any loop of its own (``def train_step(model, opt, x, y): ...; loss.backward();
        opt.step()``; the backward may run per micro-batch of a loop of its own, gradient
        accumulation):
        a call of it inside another module's loop is that loop's training step (project mode:
        ``FunctionFacts.steps_once``). One pass over the function's calls."""
        backward = any(type(c.func) is ast.Attribute and c.func.attr == "backward" and cx.func is func
                       for c, cx in func.calls)
        return backward and self.func_updates(func) and not any(
            cx.loops for c, cx in func.calls if cx.func is func and (
                type(c.func) is ast.Attribute and c.func.attr in ("step", "optimizer_step")))

    def updates_once(self, func: FunctionInfo) -> bool:
        """``func``'s own code runs an optimizer update once per call, outside any loop of its
        own (``self.optimizer.step()`` in a fairseq-style ``train_step`` whose backward a task
        of another module runs): a loop calling it is the training step loop. Memoised."""
        key = ("updatesonce", id(func))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = any(
                cx.func is func and not cx.loops and self._is_update(c, cx) for c, cx in func.calls)
        return found

    #: calls that read their receiver on the host (XLA501's spellings)
    _READ_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
    #: data-dependent output shapes as tensor methods (XLA503's spellings)
    _SHAPE_METHODS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive"})
    #: expressions a name bound from a parameter is computed by (``keep = labels != pad``)
    _PARAM_DERIVED = (ast.Subscript, ast.Attribute, ast.Name, ast.Compare, ast.UnaryOp, ast.BinOp)
    #: builtins that read or print their argument
    _READ_BUILTINS = frozenset({"float", "int", "bool", "print"})

    def _reads_params(self, func: FunctionInfo, params: list[str]) -> bool:
        """``func``'s own code reads a parameter the way the step rules look at: ``p.item()``
        (``.tolist()``, ``.numpy()``, ``.cpu()``), ``float(p)`` / ``print(p)``, ``p`` in an
        f-string, or a comparison or call on ``p`` in an ``if`` / ``while`` / ``assert``
        test, a subscript of ``p`` by a computed index or by ``p`` (``logits[keep]``: a
        boolean mask, XLA503) or a data-dependent call on it (``p.nonzero()``), also of a
        name bound from ``p`` (``norm = outputs["grad_norm"]``, ``keep = labels != -1``; a
        cheap gate before other modules are asked who calls it). Memoised."""
        key = ("readsparams", id(func))
        found = self._cache.get(key)
        if found is not None:
            return found
        wanted = set(params)
        candidates = []  # what each read reads, judged once the names bound from params are known
        for node in ast.walk(func.node):
            t = type(node)
            if t is ast.Assign and len(node.targets) == 1:  # a name bound from a parameter (`norm = outputs["grad_norm"]`)
                target, value = node.targets[0], node.value
                if type(target) is ast.Name:
                    pairs = ((target, value),)
                elif type(target) is ast.Tuple and type(value) is ast.Tuple and len(value.elts) == len(target.elts):
                    pairs = zip(target.elts, value.elts)  # ids, labels = batch["input_ids"], batch["labels"]
                else:
                    pairs = ()
                for n, v in pairs:
                    if type(n) is ast.Name and type(v) in self._PARAM_DERIVED \
                            and any(type(x) is ast.Name and x.id in wanted for x in ast.walk(v)):
                        wanted.add(n.id)
            elif t is ast.Call:
                f = node.func
                if type(f) is ast.Attribute and (f.attr in self._READ_METHODS or f.attr in self._SHAPE_METHODS):
                    candidates.append(f.value)
                elif type(f) is ast.Name and f.id in self._READ_BUILTINS:
                    candidates.extend(node.args)
            elif t is ast.FormattedValue:
                candidates.append(node.value)
            elif t is ast.Subscript and type(node.slice) in (ast.Name, ast.Compare, ast.UnaryOp, ast.BinOp, ast.Call):
                candidates.append(node.slice)  # x[keep], x[labels != pad]: a mask the step may build
            elif t in (ast.If, ast.While, ast.Assert):
                candidates.extend(n for n in ast.walk(node.test) if type(n) in (ast.Compare, ast.Call))
        found = any(type(n) is ast.Name and n.id in wanted for c in candidates for n in ast.walk(c))
        self._cache[key] = found
        return found

    def _syncs_param(self, func: FunctionInfo, params: list[str]) -> bool:
        """``func``'s own code reads a parameter itself on the host: ``p.item()`` (``.tolist()``,
        ``.numpy()``, ``.cpu()``) or ``float(p)`` / ``int(p)`` (the narrow gate of
        :meth:`project_step_calls` for a module that imports torch_xla). Memoised."""
        key = ("syncsparam", id(func))
        found = self._cache.get(key)
        if found is None:
            wanted = set(params)
            found = False
            for c, cx in func.calls:
                if cx.func is not func:
                    continue
                f = c.func
                if type(f) is ast.Attribute and f.attr in self._READ_METHODS:
                    arg = f.value
                elif type(f) is ast.Name and f.id in ("float", "int") and len(c.args) == 1:
                    arg = c.args[0]
                else:
                    continue
                if type(arg) is ast.Name and arg.id in wanted:
                    found = True
                    break
            self._cache[key] = found
        return found

    def _reads_on_host(self, func: FunctionInfo) -> bool:
        """``func``'s own code reads some value on the host the way XLA501 looks at
        (``x.item()``, ``.tolist()``, ``.numpy()``, ``.cpu()``): asked of a helper another
        module's step may run (``def train_step(model, opt, x, y): ... loss.backward();
        opt.step(); return loss.item()``, or an override a base class's step loop calls),
        whose reads need not be of a parameter. Memoised."""
        key = ("readshost", id(func))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = any(
                type(c.func) is ast.Attribute and c.func.attr in self._READ_METHODS and cx.func is func
                for c, cx in func.calls)
        return found

    def _escaped(self, func: FunctionInfo, calls: int) -> bool:
        """``func`` is read more often than the module calls it: handed on as a value."""
        reads = self._cache.get("name_reads")
        if reads is None:
            names = {f.name for f in self.functions if f.cls is None}
            reads = self._cache["name_reads"] = _name_reads(self.tree, names)
        return reads.get(func.name, 0) > calls

    def xla_param_aliases(self) -> bool:
        """Some parameter is bound to a torch_xla name at every call (:meth:`param_alias`):
        the module reads torch_xla names without importing it (``train_fn(..., xm)``)."""
        return any(q.split(".", 1)[0] == "torch_xla" for q in self._param_aliases.values())

    def _settle_param_aliases(self) -> None:
        """Fill :attr:`_param_aliases` and add the parameters it binds to :attr:`resolvable`.

        Runs before any query, with its own resolution (never :meth:`qualname`, whose
        answers are cached and would miss the aliases being settled): one pass over the
        calls whose callee is a name bound to one plain function of the module, and a few
        rounds for parameters passed on. Linear in the module's calls."""
        funcs = [f for f in self.functions if f.cls is None and _all_params(f)]
        if not funcs:
            return
        by_id = {id(f): f for f in funcs}
        sites: dict[int, list] = {}
        direct: dict[int, int] = {}
        for call, ctx in self.calls:
            f = call.func
            if type(f) is not ast.Name:
                continue
            bindings = self.lookup(f.id, ctx, getattr(f, "lineno", None))
            if not bindings or len(bindings) != 1 or bindings[0][1] != "def" or id(bindings[0][2]) not in by_id:
                continue
            target = bindings[0][2]
            direct[id(target)] = direct.get(id(target), 0) + 1
            sites.setdefault(id(target), []).append((call, ctx))
        candidates = []
        for f in funcs:
            calls = sites.get(id(f), [])
            # callers in other modules pass a module alias (`train_fn(..., xm)`) into a helper
            # module that does not import torch_xla itself; a module that does uses its own
            # imports, and asking every importer of a torch_xla module would summarise most
            # of a project that is torch_xla code (pytorch/xla's tree: 1.37x -> 1.1x)
            project = self.project_callers is not None and not self.uses_torch_xla \
                and f.ctx is not None and f.ctx.func is None
            if calls or project:
                candidates.append((f, calls))
        table = self._settle_rounds(candidates, set())
        if table:
            # a function also read as a value (handed on, stored) has callers nobody sees: its
            # parameters are unknown. Counted exactly with one walk of the tree, needed only
            # in a module where some alias was found.
            reads = _name_reads(self.tree, {f.name for f, _ in candidates})
            escaped = {id(f) for f, _ in candidates if reads.get(f.name, 0) > direct.get(id(f), 0)}
            if escaped:
                table = self._settle_rounds(candidates, escaped)
        self._param_aliases = table
        for _, p in table:
            self.resolvable.add(p)

    def _settle_rounds(self, candidates, escaped) -> dict:
        table: dict[tuple[int, str], str] = {}
        for _ in range(_ALIAS_ROUNDS):
            changed = False
            for f, calls in candidates:
                if id(f) in escaped:
                    continue
                for p in _all_params(f):
                    if (id(f), p) in table:
                        continue
                    q = self._agreed_alias(f, p, calls, table)
                    if q is not None:
                        table[(id(f), p)] = q
                        changed = True
            if not changed:
                break
        return table

    def _agreed_alias(self, func, param, calls, table) -> str | None:
        found = None
        for call, ctx in calls:
            arg = self.argument_for(call, ctx, func, param)
            if not isinstance(arg, ast.AST) or arg is UNKNOWN:
                return None
            q = self._arg_alias(arg, ctx, table)
            if q is None or (found is not None and q != found):
                return None
            found = q
        others = self.project_arguments(func, param)
        if others is None:
            return None
        for a in others:
            if a.kind != "name" or (found is not None and a.name != found):
                return None
            found = a.name
        return found

    def _arg_alias(self, expr: ast.AST, ctx, table, depth: int = 0) -> str | None:
        """The dotted name a name or attribute chain argument is bound to: an import, a
        plain alias of one, or a parameter already settled in ``table``."""
        parts = []
        node = expr
        while type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        if type(node) is not ast.Name or depth > 8:
            return None
        bindings = self.lookup(node.id, ctx, getattr(node, "lineno", None))
        if not bindings:
            return None
        base = None
        for _, kind, target, b_ctx in bindings:
            if kind == "import":
                q = target
            elif kind == "param" and isinstance(target, FunctionInfo):
                q = table.get((id(target), node.id))
            elif kind == "value" and type(target) in (ast.Name, ast.Attribute) and b_ctx is not None:
                q = self._arg_alias(target, b_ctx, table, depth + 1)
            else:
                return None
            if q is None or (base is not None and q != base):
                return None
            base = q
        if parts:
            base = base + "." + ".".join(reversed(parts))
        return canonical(base)


def _forward_argument(call: ast.Call, index: int, name: str) -> ast.AST | None:
    """What ``model(...)`` passes for ``forward``'s parameter ``name`` at ``index`` (after
    ``self``); None when absent or hidden behind a splat."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    for i, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            return None
        if i == index:
            return arg
    return None


def _name_reads(tree: ast.AST, names: set[str]) -> dict[str, int]:
    """How many times each of ``names`` is read in the module (every scope)."""
    out: dict[str, int] = {}
    for node in ast.walk(tree):
        if type(node) is ast.Name and node.id in names and type(node.ctx) is ast.Load:
            out[node.id] = out.get(node.id, 0) + 1
    return out


def _all_params(func: FunctionInfo) -> list[str]:
    args = func.node.args
    return func.params + [a.arg for a in args.kwonlyargs]

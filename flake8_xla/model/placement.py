"""Where a trained module lives: modules built on the host that an optimizer trains in a
step loop and that nothing moves to a device (XLA404), optimizers built over a module's
parameters before that module moves to the device (XLA405), and the device variable a fix
may name.

- :meth:`Placement.host_modules_trained`: ``(name node, ctx, optimizer constructor)`` for a
  module bound in a function to a module built on the host (a module constructor, or a
  module function whose every return is one), whose parameters an optimizer stepped in a
  step loop of XLA code updates, and that the function never moves (``.to(...)``,
  ``.cuda()``, ``.xla()``, ``.to_empty()``), never hands to a call that may move it (any
  call but the module's own forward, its methods and a few inert builtins), never aliases
  and never returns.
- :meth:`Placement.optimizers_before_moves`: ``(constructor, ctx, move, move ctx)`` for an
  optimizer built over ``m.parameters()`` of a module built on the host in XLA code,
  followed in the same function (or at module level), on the same path and at the same
  loop depth, by a move of ``m`` (or of a module above or
  below it) to the XLA device, to CUDA or to a rank index (XLA401 / XLA402 turn those into
  XLA moves), with ``m`` bound to the same module at both places and the optimizer not
  rebuilt after the move. In project mode the move may be a call of another module's
  helper that returns its parameter moved to the XLA device
  (``model = backend.prepare_model(model)`` on a launched ``TPUBackend``:
  ``HelperFacts.moves_param``), and a module the launched function of a multi-process
  launch receives as a parameter is on the host (it came from the parent process).
- :meth:`Placement.device_name_at`: a plain name of the function (or of the module) bound
  only to the XLA device before a line: what ``model.to(...)`` and
  ``pl.MpDeviceLoader(loader, ...)`` should name.

Every answer is memoised in ``self._cache``; the per-function indexes are built once.
"""

from __future__ import annotations

import ast
import bisect

from .scopes import Ctx, FunctionInfo
from .optimizers import OPTIMIZER_PREFIXES
from .replicas import is_rank_value
from .runtime import dotted, is_cuda_string

#: calls that read a module without moving it or keeping it (a module passed to anything
#: else may be moved there: unknown)
_INERT_CALLS = frozenset({"print", "len", "isinstance", "id", "type", "repr", "str", "hasattr", "getattr",
                          "sum", "list", "tuple", "sorted", "enumerate", "zip"})
_INERT_PREFIXES = ("logging.", "torch.nn.init.", "torch.nn.utils.")
#: move methods: any of them on the module (whatever the device) makes its place unknown or known
_MOVES = frozenset({"to", "cuda", "xla", "to_empty", "cpu"})


class Placement:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    # ------------------------------------------------------------------ XLA404
    def host_modules_trained(self) -> list[tuple[ast.Name | ast.Attribute, Ctx, ast.Call]]:
        """Modules built on the host, trained in XLA code and never moved (see the module
        docstring): ``(the name node of the binding, its ctx, the optimizer constructor)``,
        one per binding; for a module held in ``self.model`` of a trainer class, the
        ``self.model`` target of its one binding (:meth:`host_attr_module`)."""
        found = self._cache.get("pl_host")
        if found is not None:
            return found
        found = []
        if not (self.method_calls("step") or self.calls_to("torch_xla.core.xla_model.optimizer_step")) \
                or not self._constructor_names():
            self._cache["pl_host"] = found
            return found  # no optimizer built, or none stepped: nothing to trace (cheap to tell)
        if self.default_device_set():
            self._cache["pl_host"] = found
            return found  # constructors may build on the device without saying so
        seen = set()
        done = set()  # ids of construction lists followed (each use of an optimizer parameter shares one)
        for opt, sctx, loop in self._stepped_optimizers():
            if self._cpu_only(sctx.func):
                continue
            conses = self.optimizer_constructions(opt, sctx)
            if not conses or id(conses) in done:
                continue
            done.add(id(conses))
            for cons, cctx in conses:
                func = cctx.func
                if func is None or not self.in_xla_code(cctx) or self._cpu_only(func):
                    continue
                modules = self.optimizer_modules(cons, cctx) or ()
                for mexpr, mctx in modules:
                    if type(mexpr) is ast.Attribute:  # self.model of a trainer class (attributes.py)
                        held = self.host_attr_module(mexpr, mctx)
                        if held is not None and id(held[0]) not in seen and self.in_xla_code(held[1]):
                            seen.add(id(held[0]))
                            found.append((held[0], held[1], cons))
                        continue
                    if type(mexpr) is not ast.Name or mctx.scope is not func.scope:
                        continue
                    target = self._host_binding(mexpr.id, mctx, cons.lineno)
                    if target is None or id(target) in seen:
                        continue
                    name_node, bctx = target
                    if not self.in_xla_code(bctx) or not self._stays(func, mexpr.id) \
                            or self._kept_on_host(func, mexpr.id, self._moved_peer(func, mexpr.id, modules)):
                        continue
                    seen.add(id(target))
                    found.append((name_node, bctx, cons))
        found.sort(key=lambda r: (r[0].lineno, r[0].col_offset))
        self._cache["pl_host"] = found
        return found

    def _stepped_optimizers(self) -> list:
        """``(optimizer expr, ctx, loop)`` of every ``opt.step()`` / ``xm.optimizer_step(opt)``
        in a step loop of XLA code."""
        out = []
        # only the loops a step call sits in directly can hold one (the rest are not asked)
        stepping = {id(ctx.loops[-1]) for _, ctx in self.method_calls("step") if ctx.loops}
        stepping.update(id(ctx.loops[-1]) for _, ctx in self.calls_to("torch_xla.core.xla_model.optimizer_step")
                        if ctx.loops)
        for loop in self.loops:
            if id(loop) not in stepping or not self.in_xla_code(loop.ctx) or not self.is_step_loop(loop):
                continue
            for call, ctx in loop.calls:
                if ctx.loops[-1] is not loop:
                    continue  # an inner loop reports it
                f = call.func
                if type(f) is ast.Attribute and f.attr == "step" and not call.args and self.is_optimizer_step(call, ctx):
                    out.append((f.value, ctx, loop))
                elif self.call_name(call, ctx) == "torch_xla.core.xla_model.optimizer_step":
                    opt = self.kwarg(call, "optimizer", 0)
                    if isinstance(opt, ast.AST):
                        out.append((opt, ctx, loop))
        return out

    def _host_binding(self, name: str, ctx: Ctx, line: int, depth: int = 0):
        """``(name node, ctx)`` of the one binding of ``name`` visible at ``line`` when it is
        an assignment in ``ctx``'s own function of a module built on the host; else None."""
        bindings = self.lookup(name, ctx, line)
        if not bindings or len(bindings) != 1:
            return None
        b_line, kind, value, b_ctx = bindings[0]
        if kind != "value" or b_ctx is None or b_ctx.scope is not ctx.scope or b_ctx.func is not ctx.func:
            return None
        if not self._built_on_host(value, b_ctx, depth):
            return None
        node = self._assigned_name(b_ctx.func, name, value)
        return (node, b_ctx) if node is not None else None

    def _built_on_host(self, value, ctx: Ctx, depth: int) -> bool:
        """A module constructor with no device (:meth:`host_built`), or a call of a module
        function whose every ``return`` is one (followed 4 levels)."""
        if self.host_built(value, ctx):
            return True
        if depth > 4 or type(value) is not ast.Call or type(value.func) is not ast.Name \
                or self.call_name(value, ctx) is not None:
            return False
        funcs = self.function_of(value.func, ctx)
        if len(funcs) != 1 or not funcs[0].returns or funcs[0].cls is not None:
            return False
        helper = funcs[0]
        for ret, rctx in helper.returns:
            if type(ret) is ast.Name:
                inner = self._host_binding(ret.id, rctx, ret.lineno, depth + 1)
                if inner is None or not self._stays(helper, ret.id, returned=True):
                    return False
            elif not self._built_on_host(ret, rctx, depth + 1):
                return False
        return True

    def _assigned_name(self, func: FunctionInfo, name: str, value: ast.AST):
        """The ``name`` target node of ``name = value`` in ``func`` (a plain assignment)."""
        node = self._assignment_of(func, value)
        if node is not None and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and node.targets[0].id == name:
            return node.targets[0]
        return None

    def _assignment_of(self, func: FunctionInfo | None, value: ast.AST):
        """The ``Assign`` statement whose value is ``value`` in ``func`` (None: the module),
        indexed once per function."""
        key = ("pl_assigns", id(func))
        table = self._cache.get(key)
        if table is None:
            nodes = self._own_nodes(func) if func is not None else ast.walk(self.tree)
            table = self._cache[key] = {id(n.value): n for n in nodes if type(n) is ast.Assign}
        return table.get(id(value))

    @staticmethod
    def _own_nodes(func: FunctionInfo):
        """The nodes of ``func``'s body, nested functions, lambdas and classes included
        (they may read the module too)."""
        todo = list(func.node.body)
        while todo:
            node = todo.pop()
            yield node
            todo.extend(ast.iter_child_nodes(node))

    def _stays(self, func: FunctionInfo, name: str, returned: bool = False) -> bool:
        """``name`` in ``func`` is only called (the forward), has its attributes read or
        methods called (``.parameters()``, ``.train()``), or is handed to an inert call:
        never moved, aliased, stored, handed to another call or returned (a helper's own
        ``return name`` is allowed with ``returned``)."""
        uses = self._name_uses(func).get(name, ())
        for kind, node in uses:
            if kind == "move":
                return False
            if kind == "return" and returned:
                continue
            if kind != "ok":
                return False
        return True

    def _name_uses(self, func: FunctionInfo) -> dict:
        """Once per function: ``name -> [(kind, node)]`` for every read of a plain name,
        kind ``ok`` (called, an attribute read or a method other than a move, an inert
        call's argument), ``move`` (``name.to(...)`` and the other move methods, also on a
        chain under it), ``return`` (``return name``) or ``escape`` (anything else)."""
        key = ("pl_uses", id(func))
        table = self._cache.get(key)
        if table is not None:
            return table
        table = {}
        parents = {}
        for node in self._own_nodes(func):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        for stmt in func.node.body:
            parents[id(stmt)] = func.node
        ctx = func.ctx
        for node in self._own_nodes(func):
            if type(node) is not ast.Name or type(node.ctx) is not ast.Load:
                continue
            parent = parents.get(id(node))
            kind = "escape"
            if type(parent) is ast.Call and parent.func is node:
                kind = "ok"
            elif type(parent) is ast.Attribute and parent.value is node:
                kind = "ok"
                top, above = parent, parents.get(id(parent))
                while type(above) is ast.Attribute and above.value is top:
                    top, above = above, parents.get(id(above))
                if type(above) is ast.Call and above.func is top and top.attr in _MOVES:
                    kind = "move"
                elif type(above) is ast.Call and above.func is not top:
                    kind = self._arg_kind(above, ctx)  # f(model.fc)
                elif type(above) in (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.Yield,
                                     ast.List, ast.Tuple, ast.Dict, ast.Set, ast.keyword):
                    kind = "escape"  # sub = model.fc: an alias of a part of it
            elif type(parent) is ast.Call:
                kind = self._arg_kind(parent, ctx)
            elif type(parent) is ast.keyword:
                call = parents.get(id(parent))
                kind = self._arg_kind(call, ctx) if type(call) is ast.Call else "escape"
            elif type(parent) is ast.Return:
                kind = "return"
            table.setdefault(node.id, []).append((kind, node))
        self._cache[key] = table
        return table

    def _arg_kind(self, call: ast.Call, ctx: Ctx) -> str:
        """``ok`` for a module handed to an inert call (``print(model)``), else ``escape``."""
        f = call.func
        if type(f) is ast.Name and f.id in _INERT_CALLS and self.lookup(f.id, ctx) is None:
            return "ok"
        q = self.call_name(call, ctx)
        return "ok" if q is not None and q.startswith(_INERT_PREFIXES) else "escape"

    def _moved_peer(self, func: FunctionInfo, name: str, modules) -> bool:
        """Another module the same optimizer updates (``modules``: its ``(expr, ctx)``) is a
        plain name ``func`` moves to the XLA device (``model.to(device)``)."""
        for expr, _ in modules:
            if type(expr) is not ast.Name or expr.id == name:
                continue
            for kind, node in self._name_uses(func).get(expr.id, ()):
                if kind == "move":
                    found = self._move_call_of(func, node)
                    if found is not None and self.move_target(*found) == "xla":
                        return True
        return False

    def _move_call_of(self, func: FunctionInfo, node: ast.Name):
        """``(call, ctx)`` of the ``node.to(...)`` / ``node.x.to(...)`` call whose receiver
        chain starts at ``node`` (the function's move calls indexed once by their root)."""
        key = ("pl_move_roots", id(func))
        index = self._cache.get(key)
        if index is None:
            index = self._cache[key] = {}
            for c, x in func.calls:
                f = c.func
                if type(f) is ast.Attribute and f.attr in _MOVES:
                    root = f.value
                    while type(root) is ast.Attribute:
                        root = root.value
                    index.setdefault(id(root), (c, x))
        return index.get(id(node))

    def _kept_on_host(self, func: FunctionInfo, name: str, moved_peer: bool = False) -> bool:
        """The function places things on the XLA device itself (a move to it, a device
        loader) but feeds the module nothing visibly on the device: a model kept on the CPU
        on purpose (a CPU policy net beside an XLA model). A function that places nothing
        (a script being ported) does not count, nor a module the function never calls whose
        optimizer also updates a module it moves to the device (``moved_peer``: a head
        added to the moved model's optimizer and forgotten in the move)."""
        key = ("pl_places", id(func))
        places = self._cache.get(key)
        if places is None:
            places = self._cache[key] = any(
                self.call_name(c, x) in self.DEVICE_LOADERS
                or (type(c.func) is ast.Attribute and c.func.attr in ("to", "xla") and self.move_target(c, x) == "xla")
                for c, x in func.calls)
        if not places:
            return False
        key = ("pl_forwards", id(func))
        forwards = self._cache.get(key)
        if forwards is None:
            forwards = self._cache[key] = {}
            for c, x in func.calls:
                if type(c.func) is ast.Name and x.func is func:
                    forwards.setdefault(c.func.id, []).append((c, x))
        if moved_peer and not forwards.get(name):
            return False
        for c, x in forwards.get(name, ()):
            if any(self._on_device(a, x, 0) for a in c.args):
                return False
        return True

    def _on_device(self, expr, ctx: Ctx, depth: int) -> bool:
        """A value visibly on the XLA device: a device tensor (``tensor_kind``), a move to
        the XLA device (``x.to(device)``; in project mode a helper that returns its argument
        moved there, ``backend.prepare_model(model)``: ``HelperFacts.moves_param``), a
        wrapper sharing the parameters of a module on it (``DDP(model.to(device))``,
        ``torch.compile``, FSDP), or a name bound only to those."""
        if depth > 4 or not isinstance(expr, ast.AST):
            return False
        if self.tensor_kind(expr, ctx) == "device":
            return True
        t = type(expr)
        if t is ast.Call:
            f = expr.func
            if type(f) is ast.Attribute and f.attr in ("to", "xla"):
                return self.move_target(expr, ctx) == "xla"
            q = self.call_name(expr, ctx)
            if q is not None and q.startswith(self._FORWARDING_WRAPPERS):  # DDP(model.to(dev)): its parameters are
                inner = self.kwarg(expr, "model" if q == "torch.compile" else "module", 0)  # the wrapped one's
                return isinstance(inner, ast.AST) and self._on_device(inner, ctx, depth + 1)
            if self.project_lookup is not None and q is None and expr.args:
                helpers = self.callee_helpers(expr, ctx)  # backend.wrap_model(model): every target moves it
                return bool(helpers) and all(h.moves_param >= 0 for h in helpers)
            return False
        if t is ast.Name:
            values = self.values(expr, ctx)
            return bool(values) and all(self._on_device(v, c, depth + 1) for v, c in values)
        if t is ast.Attribute and expr.attr == "module" and type(expr.value) is ast.Name:
            # model_without_ddp = model.module: the module a DDP / FSDP wrap of a moved module holds
            values = self.values(expr.value, ctx)
            return bool(values) and all(
                type(v) is ast.Call and (self.call_name(v, c) or "").startswith(self._FORWARDING_WRAPPERS)
                and self._on_device(v, c, depth + 1) for v, c in values)
        return False

    def _cpu_only(self, func: FunctionInfo | None) -> bool:
        """The function visibly trains on the CPU: it moves something to a device that is
        visibly the CPU (``x.to("cpu")``, ``.to(torch.device("cpu"))``, ``.cpu()`` aside)."""
        if func is None:
            return False
        key = ("pl_cpu", id(func))
        if key not in self._cache:
            self._cache[key] = any(
                type(c.func) is ast.Attribute and c.func.attr == "to" and self.move_target(c, x) == "cpu"
                for c, x in func.calls if x.func is func)
        return self._cache[key]

    # ------------------------------------------------------------------ XLA405
    def optimizers_before_moves(self) -> list[tuple[ast.Call, Ctx, ast.Call, Ctx]]:
        """Optimizers built before their module moves to the device (see the module
        docstring): ``(constructor, ctx, move call, move ctx)``."""
        found = self._cache.get("pl_before")
        if found is not None:
            return found
        found = []
        names = self._constructor_names()
        for call, ctx in self.calls_to(*names) if names else ():
            if not self.in_xla_code(ctx):
                continue
            end = getattr(call, "end_lineno", call.lineno)
            hit = None
            for mexpr, mctx in self.optimizer_modules(call, ctx) or ():
                receiver = dotted(mexpr)
                if receiver is None or mctx.scope is not ctx.scope:
                    continue
                moves = self.moves(receiver, mctx)
                start = bisect.bisect_right([r[0] for r in moves], end) if len(moves) < 64 else \
                    bisect.bisect_right(self._lines(("pl_mvl", id(mctx.scope), receiver), lambda: moves), end)
                for line, move, mvctx in moves[start:start + 32]:  # the nearest moves after it
                    if mvctx.func is not ctx.func or mvctx.loops != ctx.loops:
                        continue
                    if not self._device_move(move, mvctx) or not self.runs_with((call, ctx), (move, mvctx)):
                        continue
                    if not self._same_module(receiver, ctx, call.lineno, mvctx, line):
                        break  # rebound in between: another module
                    if not self._on_host_at(receiver, ctx, call.lineno):
                        break  # a parameter, or moved already: the later move may be a no-op
                    if self._rebuilt_after(call, ctx, line):
                        break
                    hit = (move, mvctx)
                    break
                if hit is None and self.project_lookup is not None and "." not in receiver:
                    hit = self._helper_move_after(call, ctx, receiver, mctx, end)
                if hit is not None:
                    break
            if hit is not None:
                found.append((call, ctx, hit[0], hit[1]))
        self._cache["pl_before"] = found
        return found

    def _helper_move_after(self, call: ast.Call, ctx: Ctx, receiver: str, mctx: Ctx, end: int):
        """``(move, ctx)`` of the first project helper call after line ``end`` that moves the
        module named ``receiver`` to the XLA device (:meth:`_helper_moves`), on the checks
        of a ``.to()`` move; else None."""
        for line, move, mvctx in self._helper_moves(receiver, mctx):
            if line <= end or mvctx.func is not ctx.func or mvctx.loops != ctx.loops \
                    or not self.runs_with((call, ctx), (move, mvctx)):
                continue
            if not self._same_module(receiver, ctx, call.lineno, mvctx, line) \
                    or not self._on_host_at(receiver, ctx, call.lineno) or self._rebuilt_after(call, ctx, line):
                return None
            if self._optimizer_handed(call, ctx, move):
                return None  # prepare(model, optimizer): the helper may point it at the moved parameters
            return move, mvctx
        return None

    def _optimizer_handed(self, call: ast.Call, ctx: Ctx, move: ast.Call) -> bool:
        """The optimizer ``call`` builds (the name or ``self.`` attribute it is assigned to)
        is an argument of the helper call ``move`` too, which may then re-point it at the
        moved parameters (``accelerator.prepare(model, optimizer)``)."""
        node = self._assignment_of(ctx.func, call)
        if node is None:
            return True  # (not bound to a name: where it goes cannot be told)
        names = {dotted(t) for t in node.targets}
        return any(dotted(a.value if type(a) is ast.Starred else a) in names
                   for a in list(move.args) + [k.value for k in move.keywords])

    def _helper_moves(self, name: str, ctx: Ctx) -> list[tuple[int, ast.Call, Ctx]]:
        """``(line, call, ctx)`` of the calls in ``ctx``'s function that pass the plain name
        ``name`` to a project helper returning that parameter moved to the XLA device
        (:attr:`flake8_xla.project.HelperFacts.moves_param`), by line. Memoised."""
        func = ctx.func
        if func is None:
            return []
        key = ("pl_hmv", id(func), name)
        found = self._cache.get(key)
        if found is not None:
            return found
        found = []
        for call, c in func.calls:
            if c.func is not func or type(call.func) not in (ast.Name, ast.Attribute) \
                    or not any(type(a) is ast.Name and a.id == name for a in call.args):
                continue
            if not self._helper_call(call, c):
                continue
            helpers = self.callee_helpers(call, c)  # (every target moves the same parameter)
            if not helpers:
                continue
            args = call.args
            at = next((i for i, a in enumerate(args) if type(a) is ast.Name and a.id == name), None)
            if at is None or any(type(a) is ast.Starred for a in args[:at + 1]):
                continue
            # returned moved (model = prepare(model)), or moved in place (Engine(model, opt):
            # its __init__ does self.model = model.to(self.device)); a method's indexes count self
            returned = {h.moves_param - (1 if "." in h.qual else 0) for h in helpers}
            in_place = [{i - (1 if "." in h.qual else 0) for i in h.moves_params} for h in helpers]
            if (len(returned) == 1 and all(h.moves_param >= 0 for h in helpers) and returned.pop() == at) \
                    or all(at in moved for moved in in_place):
                found.append((call.lineno, call, c))
        found.sort(key=lambda r: r[0])
        self._cache[key] = found
        return found

    def _launched_param(self, name: str, ctx: Ctx, line: int) -> bool:
        """``name`` is a parameter (not the process index) of ``ctx``'s function, which a
        project's multi-process launch wrapper starts (``backend.launch(_worker, model)``)
        and nothing in the module calls, not moved or handed to a call before ``line``:
        what it holds came from the parent process, so it is not on this process's XLA
        device."""
        func = ctx.func
        wrappers = self.project_launchers
        bindings = self.lookup(name, ctx, line)
        if func is None or not wrappers or not bindings or len(bindings) != 1 or bindings[0][1] != "param" \
                or bindings[0][2] is not func or self.is_launch_index(func, name):
            return False
        ids = {id(call) for call, _ in self.calls_named(wrappers)}
        if not any(func in targets and not single and id(call) in ids for call, _, targets, single in self.launches()):
            return False
        start = func.node.lineno
        return not self.calls_of(func) and not self.moved_between(name, ctx, start, line) \
            and not self.passed_between(name, ctx, start, line)

    def _constructor_names(self) -> list[str]:
        """The qualified names of the optimizer constructors the module calls (the test
        depends on the callee's name only: one call per name is asked), memoised."""
        names = self._cache.get("pl_cons")
        if names is None:
            names = self._cache["pl_cons"] = [
                q for q, recs in self.call_index().items()
                if q.startswith(OPTIMIZER_PREFIXES) and self.is_optimizer_constructor(*recs[0])]
        return names

    def _device_move(self, call: ast.Call, ctx: Ctx) -> bool:
        """A move to the XLA device, or one XLA401 / XLA402 rewrite into it (``.cuda()``,
        ``.to("cuda")``, ``.to(rank)``) in XLA code."""
        if not self.in_xla_code(ctx):
            return False
        f = call.func
        if f.attr == "cuda":
            return True
        if f.attr not in ("to", "xla"):
            return False
        target = self.move_target(call, ctx)
        if target == "xla":
            return True
        if target is not None:
            return False
        dev = self.kwarg(call, "device", 0)  # the spellings XLA401 / XLA402 fix
        return isinstance(dev, ast.AST) and (is_cuda_string(self, dev, ctx) or is_rank_value(self, dev, ctx))

    def _on_host_at(self, receiver: str, ctx: Ctx, line: int) -> bool:
        """The module ``receiver`` (or the one it is part of) was built on the host in this
        function and nothing moved it, or handed it to a call, before ``line``."""
        parts = receiver.split(".")
        holder = ".".join(parts[:2]) if parts[0] == "self" and len(parts) > 1 else parts[0]
        if self.host_module(holder, ctx, line) is not None:
            return True
        if "." in holder:
            return False
        found = self._host_binding(holder, ctx, line)  # model = make_model(): a factory's module
        if found is None:
            return self.project_lookup is not None and self._launched_param(holder, ctx, line)
        bound = found[0].lineno
        return not self.moved_between(holder, ctx, bound, line) and not self.passed_between(holder, ctx, bound, line)

    def _same_module(self, receiver: str, ctx: Ctx, line: int, mctx: Ctx, move_line: int) -> bool:
        """The root name of ``receiver`` holds the same binding at the constructor and just
        before the move (``model = model.to(dev)`` rebinds it only on the move's line)."""
        root = receiver.split(".", 1)[0]
        return self.lookup(root, ctx, line) == self.lookup(root, mctx, move_line - 1)

    def _rebuilt_after(self, call: ast.Call, ctx: Ctx, line: int) -> bool:
        """The name the constructor is assigned to is bound again after ``line`` in the
        same scope (the first optimizer is then dropped)."""
        node = self._assignment_of(ctx.func, call)
        if node is None:
            return False
        for target in node.targets:
            if type(target) is ast.Name:
                return any(b[0] > line for b in ctx.scope.bindings.get(target.id, ()))
        return False

    # ------------------------------------------------------------------ the device name
    def device_name_at(self, ctx: Ctx, line: int) -> str | None:
        """A plain name bound, in ``ctx``'s function (or at module level when the function
        does not bind it), only to the XLA device, unconditionally (no branch, no loop)
        and before ``line``: ``device`` for ``device = torch_xla.device()``. The one bound
        last wins."""
        func = ctx.func
        own = self._device_names(ctx.scope, func.ctx.frames if func is not None else ())
        i = bisect.bisect_left(own, (line, ""))
        if i:
            return own[i - 1][1]
        if func is None:
            return None
        module = ctx.scope
        while module.parent is not None:
            module = module.parent
        for first, name in reversed(self._device_names(module, ())):
            if first < line and name not in ctx.scope.bindings:
                return name
        return None

    def _device_names(self, scope, base) -> list[tuple[int, str]]:
        """``(first binding line, name)`` of the names ``scope`` binds only to this process's
        XLA device, unconditionally (frames ``base``, no loop); sorted; once per scope."""
        key = ("pl_devnames", id(scope))
        found = self._cache.get(key)
        if found is None:
            found = []
            for name, bindings in scope.bindings.items():
                if not bindings or any(kind != "value" or b_ctx is None or b_ctx.loops
                                       or (b_ctx.frames or None) is not (base or None)
                                       for _, kind, _, b_ctx in bindings):
                    continue
                if all(self._device_value(target, b_ctx) for _, _, target, b_ctx in bindings):
                    found.append((min(b[0] for b in bindings), name))
            found.sort()
            self._cache[key] = found
        return found

    def ctx_at_line(self, line: int) -> Ctx:
        """A context for code at ``line``: the innermost function around it (its scope), or
        the module (one sweep over the functions, built once)."""
        owners = self._cache.get("pl_owners")
        if owners is None:
            last = max((getattr(f.node, "end_lineno", f.node.lineno) for f in self.functions), default=0)
            owners = [None] * (last + 2)
            stack: list = []
            funcs = sorted((f for f in self.functions if f.scope is not None),
                           key=lambda f: (f.node.lineno, -getattr(f.node, "end_lineno", f.node.lineno)))
            i = 0
            for n in range(1, last + 1):
                while i < len(funcs) and funcs[i].node.lineno <= n:
                    stack.append(funcs[i])
                    i += 1
                while stack and getattr(stack[-1].node, "end_lineno", stack[-1].node.lineno) < n:
                    stack.pop()
                owners[n] = stack[-1] if stack else None
            self._cache["pl_owners"] = owners
        f = owners[line] if 0 <= line < len(owners) else None
        if f is None:
            return Ctx(self.module_scope, None, (), ())
        return Ctx(f.scope, f, (), f.ctx.frames)

    def _device_value(self, value, ctx) -> bool:
        """Only this process's XLA device (``torch_xla.device()``, ``xm.xla_device()``,
        ``torch.device("xla")``): not ``"xla" if tpu else "cpu"``, not ``xm.xla_device(rank)``."""
        from .runtime import XLA_DEVICE_CALLS

        if type(value) is not ast.Call:
            return False
        q = self.call_name(value, ctx)
        if q in XLA_DEVICE_CALLS:
            return not value.args and not value.keywords  # xm.xla_device(rank) is XLA402's
        if q == "torch.device" and len(value.args) == 1 and not value.keywords:
            return self.const(value.args[0], ctx) == "xla"
        return False

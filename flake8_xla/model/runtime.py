"""Runtime odds and ends: SPMD programs, XLA device expressions, where a module is moved
to the device, weight ties, and the code that runs XLA computations.

- :meth:`Runtime.spmd_program`: XLA-on code turns SPMD on (``xr.use_spmd()``,
  ``XLA_USE_SPMD``, a call of the sharding API) and starts no second process.
- :meth:`Runtime.device_place`: ``"xla"``, ``"cpu"`` or ``None`` (unknown) for a device
  expression, through names and both arms of a conditional.
- :meth:`Runtime.moves`: the ``X.to(...)`` / ``X.cuda()`` / ``X.to_empty(...)`` calls of
  a receiver (``model``, ``self.fc``) in one scope, by line; :meth:`Runtime.passes`: the
  calls a name is handed to (a helper may move what it gets).
- :meth:`Runtime.host_module`: a name bound to a module built on the host (a module
  constructor not moved, not given ``device=``).
- :meth:`Runtime.weight_ties`: ``a.x.weight = b.y.weight`` assignments.
- :meth:`Runtime.keyword_calls`: the calls passing ``name=...``, indexed once (the
  keyword counterpart of ``method_calls``).
- :meth:`Runtime.computes_before`: a call, loop or helper before a line of a function that
  runs an XLA computation (a sync, a training loop, a host read of a device value).
- Device strings, as functions of the model (the rules and :class:`Placement` ask them):
  :func:`str_value` (a string constant or an f-string's literal head), :func:`device_leaves`
  (what a device expression may be), :func:`is_xla_device`, :func:`is_cuda_string`.

Every answer is memoised in ``self._cache``; indexes are built once per module.
"""

from __future__ import annotations

import ast
import bisect
from typing import TYPE_CHECKING

from .scopes import UNKNOWN, Ctx, _expr_key, _is_main_guard, param_default

if TYPE_CHECKING:  # the facade is built from this mixin: annotations only
    from . import Model

XLA_DEVICE_CALLS = ("torch_xla.device", "torch_xla.core.xla_model.xla_device", "torch_xla.runtime.xla_device")
#: the packages of the SPMD sharding API (the old experimental spelling until 2.4)
SPMD_PACKAGES = ("torch_xla.distributed.spmd", "torch_xla.experimental.xla_sharding",
                 "torch_xla.experimental.spmd_fully_sharded_data_parallel")
#: sharding calls that raise unless SPMD is on (a ``Mesh`` is a plain object)
_SPMD_ONLY = frozenset({"mark_sharding", "mark_sharding_with_gradients", "SpmdFullyShardedDataParallel",
                        "enable_manual_sharding"})
#: methods that move a module or tensor to another device
MOVE_METHODS = frozenset({"to", "cuda", "to_empty", "xla"})
#: methods that return the module they are called on
_SELF_RETURNING = frozenset({"train", "eval", "float", "half", "bfloat16", "double", "requires_grad_"})
#: calls that never move a module handed to them
_INERT_PREFIXES = ("torch_xla.distributed.spmd.", "torch_xla.experimental.xla_sharding.", "print", "len",
                   "isinstance", "id", "type", "repr", "str", "sum", "list", "tuple", "sorted",
                   "enumerate", "zip", "logging.", "torch.nn.init.", "torch.nn.utils.", "copy.deepcopy")
#: tensor methods that read a device value on the host (the graph before runs)
_READS = frozenset({"item", "tolist", "numpy", "cpu"})
#: builtins that read a tensor's value on the host (``print(t)`` runs the computation)
_BUILTIN_READS = frozenset({"print", "float", "int", "bool", "str", "repr"})


def chain_parts(chain) -> tuple[str, ...] | None:
    """``a.b.c`` -> ``("a", "b", "c")``; ``None`` when the chain is not rooted in a name."""
    parts = []
    node = chain
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


def dotted(expr) -> str | None:
    """``model``, ``self.fc``, ``a.b.c`` for a name or attribute chain; else None."""
    parts = chain_parts(expr)
    return ".".join(parts) if parts is not None else None


def str_value(model: Model, expr, ctx: Ctx):
    """A string constant (following simple names), or the literal head of an f-string; else None."""
    if expr is None or expr is UNKNOWN:
        return None
    if type(expr) is ast.JoinedStr:
        head = expr.values[0] if expr.values else None
        if type(head) is ast.Constant and isinstance(head.value, str):
            return head.value
        return None
    value = model.const(expr, ctx)
    return value if isinstance(value, str) else None


def device_leaves(model: Model, expr, ctx: Ctx) -> list | None:
    """What a device expression may be: both arms of a conditional, every assignment of a
    name or ``self.`` attribute; None if unknown."""
    out = []
    todo = [(expr, ctx, 0)]
    while todo:
        e, c, depth = todo.pop()
        if e is None or e is UNKNOWN or depth > 8 or len(out) > 16:
            return None
        if type(e) is ast.IfExp:
            todo.append((e.body, c, depth + 1))
            todo.append((e.orelse, c, depth + 1))
            continue
        if type(e) in (ast.Name, ast.Attribute) and model.qualname(e, c) is None:
            vals = model.values(e, c)
            if not vals:
                return None
            todo.extend((v, vc, depth + 1) for v, vc in vals)
            continue
        out.append((e, c))
    return out


def is_xla_device(model: Model, expr, ctx: Ctx) -> bool:
    """``torch_xla.device()`` (``xm.xla_device()``, ``xr.xla_device()``), ``torch.device("xla...")``
    or a string naming an XLA device (``"xla"``, ``f"xla:{i}"``)."""
    if type(expr) is ast.Call:
        q = model.call_name(expr, ctx)
        if q in XLA_DEVICE_CALLS:
            return True
        if q == "torch.device" and expr.args:
            text = str_value(model, expr.args[0], ctx)
            return text is not None and text.startswith("xla")
        return False
    text = str_value(model, expr, ctx)
    return text is not None and text.startswith("xla")


def is_cuda_string(model: Model, expr, ctx: Ctx) -> bool:
    """``"cuda"``, ``"cuda:0"``, ``f"cuda:{rank}"``, ``"cuda" if ... else "cpu"``, or a name
    bound to such values; False when any possible value is an XLA device (the code picks
    XLA when it runs under XLA) or a value cannot be seen."""
    leaves = device_leaves(model, expr, ctx)
    if not leaves or any(is_xla_device(model, e, c) for e, c in leaves):
        return False
    for e, c in leaves:
        text = str_value(model, e, c)
        if text is not None and (text == "cuda" or text.startswith("cuda:")):
            return True
    return False


#: dropout that draws random numbers where its input lives (a function, and a module class)
DROPOUT_FUNCTIONS = frozenset({
    "torch.nn.functional.dropout", "torch.nn.functional.dropout1d", "torch.nn.functional.dropout2d",
    "torch.nn.functional.dropout3d", "torch.nn.functional.alpha_dropout", "torch.nn.functional.feature_alpha_dropout",
    "torch.dropout"})
DROPOUT_MODULES = frozenset({
    "torch.nn.Dropout", "torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d", "torch.nn.AlphaDropout",
    "torch.nn.FeatureAlphaDropout"})


class Runtime:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    # ------------------------------------------------------------------ keyword calls
    def keyword_calls(self, *names: str) -> list[tuple[ast.Call, Ctx]]:
        """Calls passing a keyword argument ``name=...`` for one of ``names``: each name's
        calls in walk order, one name after the other, a call passing two of them listed
        once (under the first). The walk fills the index (keyword -> calls); like
        :meth:`method_calls` it lets a rule ask only for the calls spelled the way it
        reports."""
        by_kw = self.kw_calls
        if len(names) == 1:
            return by_kw.get(names[0], [])
        seen: set[int] = set()
        out = []
        for name in names:
            for rec in by_kw.get(name, ()):
                if id(rec[0]) not in seen:
                    seen.add(id(rec[0]))
                    out.append(rec)
        return out

    # ------------------------------------------------------------------ SPMD
    def spmd_evidence(self) -> list[tuple[ast.AST, Ctx]]:
        """What turns SPMD on in XLA-on code: ``xr.use_spmd()``, the calls that raise
        without it (``mark_sharding``, FSDPv2), ``XLA_USE_SPMD`` set to a true value; empty when the
        module starts a second process (a multi-process launch is one process per device),
        except by a launch that SPMD, switched on before it in the launching process, makes
        an error (XLA004: ``xr.use_spmd()`` then ``torch_xla.launch(run)`` raises on 2.5+,
        and ``run`` called directly, the fix, is the SPMD program)."""
        found = self._cache.get("rt_spmd")
        if found is not None:
            return found
        found = []
        switches = [q for q in self.call_index() if q == "torch_xla.runtime.use_spmd" or (
            q.startswith(SPMD_PACKAGES) and q.rsplit(".", 1)[-1] in _SPMD_ONLY)]
        for call, ctx in self.calls_to(*switches) if switches else ():
            if self.in_xla_code(ctx):
                found.append((call, ctx))
        for key, node, value, ctx in self.env_writes():
            if key == "XLA_USE_SPMD" and self.const(value, ctx) in ("1", "true", "True", 1, True) \
                    and self.in_xla_code(ctx):
                found.append((node, ctx))
        if found and any(not single and not any(self.runs_before_launch(n, sctx, call, ctx)
                                                for n, sctx in self.spmd_switches())
                         for call, ctx, _, single in self.launches()):
            found = []
        self._cache["rt_spmd"] = found
        return found

    def spmd_program(self) -> bool:
        """True when some XLA-on code turns SPMD on (see :meth:`spmd_evidence`), or (project
        mode) a module whose code reaches this one's does (:attr:`project_setup`)."""
        return bool(self.spmd_evidence()) or self._project_spmd()

    def _project_spmd(self) -> bool:
        return self.project_setup is not None and self.project_setup.spmd

    def runs_spmd(self, ctx: Ctx) -> bool:
        """True when code at ``ctx`` runs under SPMD: SPMD is turned on unconditionally at
        module level (``if __name__ == "__main__":`` aside), or in the same function on the
        same branch, or unconditionally in a function from which ``ctx``'s function is
        reached; a script that turns it on only under a flag keeps its other mode, and its
        flagged path is SPMD code (the functions called only from it after the switch). In
        project mode, without evidence of its own: a function an SPMD module of the project
        reaches, and no multi-process launch does (:meth:`_multi_reached`)."""
        evidence = self.spmd_evidence()
        if not evidence:  # project mode: code an SPMD module of the project reaches runs under it
            return self._project_spmd() and self.in_project_reach(ctx) and not self._multi_reached(ctx)
        key = ("rt_runs_spmd", id(ctx.func), id(ctx.frames) if ctx.frames else 0)
        if key in self._cache:
            return self._cache[key]
        result = False
        roots = []
        for node, ectx in evidence:
            base = ectx.func.ctx.frames if ectx.func is not None else None
            unconditional = _only_main_guard(ectx.frames, base)
            if ectx.func is None and unconditional:
                result = True
                break
            if ectx.func is ctx.func and frames_within(ectx.frames, ctx.frames):
                result = True
                break
            if ectx.func is not None and unconditional:
                roots.append(ectx.func)
        if not result and roots and ctx.func is not None:
            result = id(ctx.func) in self.reachable(roots)
        if not result and ctx.func is not None:
            result = id(ctx.func) in self._flag_spmd_functions()
        self._cache[key] = result
        return result

    def _multi_reached(self, ctx: Ctx) -> bool:
        """Project mode: code at ``ctx`` is in a function a multi-process launch of another
        project module reaches (directly or through this module's calls): not (only) SPMD
        code, since SPMD starts no second process (the setup of the launching modules is
        merged: an SPMD script and an ``xmp.spawn`` one may reach the same module)."""
        reach = self._cache.get("rt_multi_reach")
        if reach is None:
            roots = self.project_roots(multi_only=True)
            reach = self._cache["rt_multi_reach"] = self.reachable(roots) if roots else set()
        func = ctx.func
        while func is not None:
            if id(func) in reach:
                return True
            func = func.ctx.func
        return False

    def _flag_spmd_functions(self) -> set[int]:
        """ids of the functions that run only on a path where SPMD was switched on under a
        flag (``if args.spmd: xr.use_spmd(); return build(ds)``): called after the switch on
        its branch (or a branch with the same test), and from nowhere else but such calls
        and the functions they reach (memoised)."""
        found = self._cache.get("rt_flag_spmd")
        if found is not None:
            return found
        found = self._cache["rt_flag_spmd"] = set()
        flagged = []  # (function or None, frames, line) of each switch under a flag
        for node, ectx in self.spmd_evidence():
            base = ectx.func.ctx.frames if ectx.func is not None else None
            if not _only_main_guard(ectx.frames, base):
                flagged.append((ectx.func, ectx.frames, node.lineno))
        if not flagged:
            return found

        candidates, path_ctxs = [], set()
        for f, frames, after in flagged:
            for call, c in (f.calls if f is not None else self.calls):
                if c.func is f and call.lineno > after and frames_within(frames, c.frames):
                    targets = self.function_of(call.func, c)
                    if targets:
                        candidates.extend(targets)
                        path_ctxs.add(id(c))
        reached = self.reachable(candidates) if candidates else set()
        for func in self.functions:
            if id(func) not in reached:
                continue
            sites = self._func_sites(func)
            # every site is on a flagged path, or in another function reached from one
            if sites and all(id(c) in path_ctxs or (c.func is not None and c.func is not func and id(c.func) in reached)
                             for c in sites):
                found.add(id(func))
        return found

    # ------------------------------------------------------------------ devices
    def device_place(self, expr, ctx: Ctx, _depth: int = 0) -> str | None:
        """``"xla"`` when a device expression may be the XLA device and every value it may
        have is seen (``torch_xla.device()``, ``"xla"``, ``torch.device("xla", 0)``, a name
        bound to one, either arm of ``a if t else b``, what a module helper returns:
        ``device = get_device()``, what every project function a call runs returns:
        ``device = backend.device()``, ``w.device`` of a device tensor ``w``: a parameter
        every caller passes one, ``p`` of ``model.parameters()`` of a module moved there);
        ``"cpu"`` when it is visibly the
        CPU; None otherwise."""
        places = set()
        todo = [(expr, ctx, 0)]
        while todo:
            e, c, depth = todo.pop()
            if e is None or not isinstance(e, ast.AST) or depth > 8 or len(places) > 8:
                return None
            t = type(e)
            if t is ast.IfExp:
                todo.append((e.body, c, depth + 1))
                todo.append((e.orelse, c, depth + 1))
                continue
            if t is ast.Call:
                q = self.call_name(e, c)
                if q in XLA_DEVICE_CALLS:
                    places.add("xla")
                    continue
                if q == "torch.device" and e.args:
                    todo.append((e.args[0], c, depth + 1))
                    continue
                funcs = self.function_of(e.func, c) if q is None else None
                if funcs and len(funcs) == 1 and funcs[0].returns and not self._generator(funcs[0]):
                    todo.extend((v, vc, depth + 1) for v, vc in funcs[0].returns)  # device = get_device()
                    continue
                if q is None and self.project_lookup is not None and self.callee_agree(e, c, "returns_device"):
                    places.add("xla")  # backend.device(): every method it runs returns the XLA device
                    continue
                return None
            if t is ast.Attribute and e.attr == "device" and _depth + depth < 8 \
                    and self.tensor_kind(e.value, c) == "device":
                places.add("xla")  # `w.device` of a tensor on the XLA device
                continue
            if t in (ast.Name, ast.Attribute) and self.qualname(e, c) is None:
                vals = self.values(e, c)
                if not vals:
                    if t is ast.Name and _depth + depth < 8 and self._param_on_xla(e, c, _depth + depth + 1):
                        places.add("xla")  # a helper's parameter every caller passes the XLA device
                        continue
                    return None
                todo.extend((v, vc, depth + 1) for v, vc in vals)
                continue
            if t is ast.JoinedStr:
                head = e.values[0] if e.values else None
                text = head.value if type(head) is ast.Constant and isinstance(head.value, str) else None
            else:
                text = self.const(e, c)
            if not isinstance(text, str):
                return None
            kind = text.split(":")[0]
            if kind in ("xla", "cpu"):
                places.add(kind)
            else:
                places.add("other")
        if "xla" in places:
            return "xla"
        return "cpu" if places == {"cpu"} else None

    def _generator(self, func) -> bool:
        """``func`` is a generator function (memoised): a call gives no ``return`` value."""
        from .attributes import _has_yield

        key = ("rt_gen", id(func))
        if key not in self._cache:
            self._cache[key] = _has_yield(func)
        return self._cache[key]

    def _param_on_xla(self, name: ast.Name, ctx: Ctx, depth: int) -> bool:
        """``name`` is a parameter of the plain module function it is read in, and every call
        of that function passes the XLA device for it (:meth:`~.params.Params.every_caller_passes`:
        calls in the module only, through the callers' own parameters a few levels; a
        function launched or read as a value, a splat, a caller in another project module:
        unknown). Memoised per (function, parameter)."""
        bindings = self.lookup(name.id, ctx, name.lineno)
        func = ctx.func
        if func is None or not bindings or len(bindings) != 1 or bindings[0][1] != "param" \
                or bindings[0][2] is not func:
            return False
        key = ("rt_param_xla", id(func), name.id)
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle of calls: unknown
            found = self._cache[key] = self.every_caller_passes(
                func, name.id, lambda arg, actx, call: self.device_place(arg, actx, depth) == "xla", "xla_device")
        return found

    def move_target(self, call: ast.Call, ctx: Ctx) -> str | None:
        """Where a ``X.to(...)`` / ``X.cuda()`` / ``X.to_empty(device=...)`` call moves ``X``:
        ``"xla"``, ``"cpu"``, ``"dtype"`` (``.to(torch.bfloat16)``: no move) or None (unknown
        or another device)."""
        f = call.func
        if type(f) is not ast.Attribute or f.attr not in MOVE_METHODS:
            return None
        if f.attr == "cuda":
            return None
        if f.attr == "xla":
            return "xla"
        dev = self.kwarg(call, "device", 0)
        if f.attr == "to" and dev is not None and dev is not UNKNOWN and type(dev) is ast.Attribute \
                and (self.qualname(dev, ctx) or "").startswith("torch.") and dev.attr in _DTYPE_NAMES:
            return "dtype"
        if f.attr == "to" and dev is None and self.kwarg(call, "dtype") is not None:
            return "dtype"
        if dev is None or not isinstance(dev, ast.AST):
            return None
        return self.device_place(dev, ctx)

    def default_device_set(self) -> bool:
        """True when the module changes torch's default device (``torch.set_default_device``,
        ``with torch.device(...):``): constructors and factories may then build on the
        XLA device without saying so."""
        if "rt_defdev" not in self._cache:
            found = bool(self.calls_to("torch.set_default_device"))
            if not found:
                for expr, ctx in self.with_items:
                    if type(expr) is ast.Call and self.call_name(expr, ctx) == "torch.device":
                        found = True
                        break
            self._cache["rt_defdev"] = found
        return self._cache["rt_defdev"]

    # ------------------------------------------------------------------ module moves
    def _moves_index(self) -> dict:
        """``(id(scope), receiver text) -> [(line, call, ctx)]`` of every move-method call,
        under the receiver's own text, its root name (``model`` for ``model.fc``) and its
        first two parts (``self.fc`` for ``self.fc.layer``); each list in line order."""
        index = self._cache.get("rt_moves")
        if index is None:
            index = {}
            for call, ctx in self.calls:
                f = call.func
                if type(f) is ast.Attribute and f.attr in MOVE_METHODS:
                    key = dotted(f.value)
                    if key is None:
                        continue
                    parts = key.split(".")
                    rec = (call.lineno, call, ctx)
                    sid = id(ctx.scope)
                    index.setdefault(("exact", sid, key), []).append(rec)
                    index.setdefault(("root", sid, parts[0]), []).append(rec)
                    if len(parts) > 1:
                        index.setdefault(("two", sid, ".".join(parts[:2])), []).append(rec)
            for recs in index.values():
                recs.sort(key=lambda r: r[0])
            self._cache["rt_moves"] = index
        return index

    def moves(self, receiver: str, ctx: Ctx) -> list[tuple[int, ast.Call, Ctx]]:
        """The move calls of ``receiver`` (``"model"``, ``"self.fc"``) in ``ctx``'s scope, of
        the chains under it (``model.fc.to(...)`` moves part of ``model``) and of the chains
        above it (``self.to(...)`` moves ``self.fc``), by line."""
        key = ("rt_mv", id(ctx.scope), receiver)
        found = self._cache.get(key)
        if found is not None:
            return found
        index = self._moves_index()
        sid = id(ctx.scope)
        parts = receiver.split(".")
        if len(parts) == 1:
            found = index.get(("root", sid, receiver), [])
        else:
            found = []
            for i in range(1, len(parts)):  # the chains above: self, self.fc (for self.fc.x)
                found += index.get(("exact", sid, ".".join(parts[:i])), [])
            found += [r for r in index.get(("two", sid, ".".join(parts[:2])), ())
                      if _under(dotted(r[1].func.value), receiver)]
            found.sort(key=lambda r: r[0])
        self._cache[key] = found
        return found

    def moved_between(self, receiver: str, ctx: Ctx, after: int, upto: int) -> bool:
        """A move of ``receiver`` (see :meth:`moves`) on a line in ``(after, upto]``."""
        return _any_between(self._lines(("rt_mvl", id(ctx.scope), receiver),
                                        lambda: self.moves(receiver, ctx)), after, upto)

    def _lines(self, key, records) -> list[int]:
        lines = self._cache.get(key)
        if lines is None:
            lines = self._cache[key] = [r[0] for r in records()]
        return lines

    def passes(self, name: str, ctx: Ctx) -> list[tuple[int, ast.Call, Ctx]]:
        """Calls in ``ctx``'s scope that take ``name`` (or a chain under it) as an argument,
        other than torch_xla's sharding API and Python builtins: they may move it."""
        index = self._cache.get("rt_passes")
        if index is None:
            index = {}
            for call, c in self.calls:
                q = self.call_name(call, c) or ""
                if not q and type(call.func) is ast.Name and self.lookup(call.func.id, c, None) is None:
                    q = call.func.id  # a builtin: isinstance(m, nn.Linear) moves nothing
                if q.startswith(_INERT_PREFIXES):
                    continue
                for arg in list(call.args) + [k.value for k in call.keywords]:
                    node = arg.value if type(arg) is ast.Starred else arg
                    while type(node) in (ast.Attribute, ast.Subscript):
                        node = node.value
                    if type(node) is ast.Name:
                        index.setdefault((id(c.scope), node.id), []).append((call.lineno, call, c))
            for recs in index.values():
                recs.sort(key=lambda r: r[0])
            self._cache["rt_passes"] = index
        return index.get((id(ctx.scope), name.split(".")[0]), [])

    def passed_between(self, name: str, ctx: Ctx, after: int, upto: int) -> bool:
        """``name`` handed to a call (see :meth:`passes`) on a line in ``(after, upto]``."""
        return _any_between(self._lines(("rt_psl", id(ctx.scope), name.split(".")[0]),
                                        lambda: self.passes(name, ctx)), after, upto)

    def host_built(self, value: ast.AST, ctx: Ctx) -> bool:
        """True when ``value`` builds a module on the host: a module constructor (a
        ``torch.nn`` layer, a module class of this file, a torchvision/timm/transformers
        model), maybe followed by ``.eval()`` / ``.float()``, with no move and no
        ``device=`` other than the CPU."""
        node = value
        for _ in range(8):
            if type(node) is not ast.Call:
                return False
            f = node.func
            if type(f) is ast.Attribute and f.attr in _SELF_RETURNING and self.call_name(node, ctx) is None:
                node = f.value
                continue
            if type(f) is ast.Attribute and f.attr in MOVE_METHODS and self.call_name(node, ctx) is None:
                return False
            break
        else:
            return False
        if type(node) is not ast.Call or not self._model_value(node, ctx):
            return False
        q = self.call_name(node, ctx) or ""
        if q.startswith(("torch.nn.parallel.", "torch_xla.", "torch.distributed.", "torch.compile")):
            return False  # a wrapper: the module it wraps may have been moved
        dev = self.kwarg(node, "device")
        if dev is not None and (not isinstance(dev, ast.AST) or self.device_place(dev, ctx) != "cpu"):
            return False
        if any(kw.arg is None for kw in node.keywords):
            return False  # **kwargs may pass device=
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):  # where its tensor was made
            data = self.kwarg(node, "data", 0)
            return isinstance(data, ast.AST) and self.cpu_tensor(data, ctx)
        cls = self.constructed_class(node, ctx)
        if cls is not None and self.class_places_all(cls):
            return False  # its own constructor builds its weights on a device
        return True

    def constructed_class(self, value: ast.AST, ctx: Ctx):
        """The ``torch.nn.Module`` subclass of this module that ``value`` constructs
        (``Net(...)``, also under ``.eval()`` / ``.float()``), or None."""
        node = value
        for _ in range(8):
            if type(node) is not ast.Call:
                return None
            f = node.func
            if type(f) is ast.Attribute and f.attr in _SELF_RETURNING and self.call_name(node, ctx) is None:
                node = f.value
                continue
            if type(f) is not ast.Name:
                return None
            cls = self.class_named(f.id, ctx)
            return cls if cls is not None and self.is_module_class(cls) else None
        return None

    def class_places_all(self, cls) -> bool:
        """True when constructing module class ``cls`` leaves no weight of it on the host:
        its ``__init__`` (or a base's, in the module) moves ``self`` to a device that is not
        visibly the CPU (``self.to(device)``), or every layer or parameter it builds in its
        attributes is built off the host (``nn.Linear(4, 4, device=dev)``, a device passed
        in; at least one, and none visibly on the host). Memoised per class; a class whose
        attributes build the class itself (a cycle) counts as not placed."""
        key = ("rt_places_all", id(cls))
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle of constructions: not placed
            found = self._cache[key] = self.mro_any(cls, "rt_self_moved", self._moves_self) or \
                self._parts_placed(cls)
        return found

    def _moves_self(self, cls) -> bool:
        """``cls.__init__`` calls ``self.to(d)`` / ``self.cuda()`` / ``self.to_empty(device=d)``
        with ``d`` not visibly the CPU."""
        init = cls.methods.get("__init__")
        if init is None or not init.params:
            return False
        me = init.params[0]
        for call, _ctx in init.calls:
            f = call.func
            if type(f) is ast.Attribute and f.attr in MOVE_METHODS and type(f.value) is ast.Name \
                    and f.value.id == me:
                dev = self.kwarg(call, "device", 0)
                if dev is None and f.attr == "to":
                    continue  # self.to(dtype=...) moves nothing
                if not isinstance(dev, ast.AST) or self.device_place(dev, _ctx) != "cpu":
                    return True
        return False

    def _parts_placed(self, cls) -> bool:
        """Every layer or parameter the attributes of ``cls`` and its module bases are built
        with is built off the host, and there is at least one."""
        placed = False
        for c in self.mro(cls):
            for values in c.attrs.values():
                for v, vctx in values:
                    if v is None or vctx is None or not self._model_value(v, vctx):
                        continue
                    if self.host_built(v, vctx):
                        return False
                    placed = True
        return placed

    def class_part_placed(self, cls, attr: str) -> bool:
        """True when attribute ``attr`` of module class ``cls`` (or a base of it in the
        module) is assigned, and some assignment builds a layer off the host (``device=``
        not visibly the CPU, a move) or a value not seen: its weights may be on a device
        when the class is constructed."""
        for c in self.mro(cls):
            for v, vctx in c.attrs.get(attr, ()):
                if v is None or vctx is None or not self.host_built(v, vctx):
                    return True
        return False

    def host_part_placed(self, name: str, attr: str, ctx: Ctx, line: int) -> bool:
        """``name`` is bound at ``line`` (every visible binding in ``ctx``'s scope) to a
        construction of a module class of this module whose constructor may place its
        attribute ``attr`` on a device (:meth:`class_part_placed`): ``b.fc.weight`` of
        ``b = Net()`` where ``Net.__init__`` has ``self.fc = nn.Linear(4, 4, device=dev)``.
        ``name`` may be ``self.m`` in a method (the class's assignments of ``m``). False
        when a binding is not such a construction, or ``name`` is a parameter."""
        if "." in name:  # self.m of a method: what the class assigns to m
            root, held = name.split(".", 1)
            func = ctx.func
            if "." in held or func is None or func.cls is None or not func.params or root != func.params[0]:
                return False
            values = func.cls.attrs.get(held, ())
        else:
            values = [(target, b_ctx) if kind == "value" else (None, None)
                      for _line, kind, target, b_ctx in self.lookup(name, ctx, line) or ()]
        if not values:
            return False
        for target, b_ctx in values:
            if target is None or b_ctx is None:
                return False
            cls = self.constructed_class(target, b_ctx)
            if cls is not None and self.class_part_placed(cls, attr):
                return True
        return False

    def host_module(self, name: str, ctx: Ctx, line: int) -> int | None:
        """The line where ``name`` (a plain name, or ``self.x`` in a method) was bound to a
        module built on the host, when every binding visible at ``line`` in ``ctx``'s
        scope is one and nothing moves it (or hands it to a helper) before ``line``;
        else None."""
        if "." in name:
            root, attr = name.split(".", 1)
            func = ctx.func
            if "." in attr or func is None or func.cls is None or not func.params or root != func.params[0]:
                return None
            assigned = [(v, c) for v, c in func.cls.attrs.get(attr, ())]
            if not assigned or any(v is None or c is None for v, c in assigned):
                return None
            here = [(v, c) for v, c in assigned if c.func is func and v.lineno < line]
            if len(here) != 1 or len(assigned) != len(here):
                return None  # also assigned in another method, or after the use: unknown
            value, vctx = here[0]
            if not self.host_built(value, vctx):
                return None
            bound = value.lineno
            if self.moved_between(name, ctx, bound - 1, line):  # self.to(...), self.fc.to(...)
                return None
            return bound
        bindings = self.lookup(name, ctx, line)
        if not bindings:
            return None
        if len(bindings) == 1 and bindings[0][1] == "param" and bindings[0][2] is ctx.func:
            return self._host_module_param(name, ctx, line)
        lines = []
        for b_line, kind, target, b_ctx in bindings:
            if kind != "value" or b_ctx is None or b_ctx.scope is not ctx.scope:
                return None
            if not self.host_built(target, b_ctx):
                return None
            lines.append(b_line)
        bound = max(lines)
        if self.moved_between(name, ctx, bound, line) or self.passed_between(name, ctx, bound, line):
            return None
        return bound

    def _host_module_param(self, name: str, ctx: Ctx, line: int) -> int | None:
        """Parameter ``name`` of ``ctx.func`` holds a module built on the host at ``line``:
        every caller, in the module and (project mode) in other project modules, passes one
        it had not moved or handed on (:meth:`~.params.Params.every_caller_passes`), and
        nothing in the function moves or hands it on before ``line``. The def's line, or None."""
        func = ctx.func
        start = func.node.lineno
        if self.moved_between(name, ctx, start, line) or self.passed_between(name, ctx, start, line):
            return None

        def local(arg, actx, call):
            return self.host_module_passed(arg, actx, call.lineno)

        key = ("host_param", id(func), name)
        found = self._cache.get(key)
        if found is None:
            self._cache[key] = False  # a cycle of calls: unknown
            found = self._cache[key] = self.every_caller_passes(func, name, local, "host_module")
        return start if found else None

    def host_module_passed(self, arg: ast.AST, ctx: Ctx, line: int) -> bool:
        """Argument ``arg`` of a call on ``line`` is a name bound to a module built on the host
        that nothing moved or handed on before this call (the call itself is the first
        hand-over): what :meth:`host_module` says of a parameter every caller passes it to."""
        return type(arg) is ast.Name and self.host_module(arg.id, ctx, line - 1) is not None \
            and not self.moved_between(arg.id, ctx, line - 1, line)

    def module_alias_root(self, name: str, ctx: Ctx, line: int, _depth: int = 0) -> str | None:
        """The module a plain name is a part of at ``line``: ``model`` for ``blk`` bound by
        ``blk = model.blocks[0]`` or walked by ``for blk in model.blocks:`` (also
        ``model.modules()`` / ``model.children()``), followed through further aliases;
        ``name`` itself when it is no such alias; None when the alias is moved or handed to
        a call between its binding and ``line`` (it may be on the device)."""
        if _depth > 8:
            return None
        bindings = self.lookup(name, ctx, line)
        if not bindings or len(bindings) != 1:
            return name
        b_line, kind, target, b_ctx = bindings[0]
        if b_ctx is not None and b_ctx.scope is not ctx.scope:
            return name
        source = None
        if kind == "value" and type(target) in (ast.Attribute, ast.Subscript):
            source = target
        elif kind == "unknown":
            for loop in self._for_loops_at().get((id(ctx.scope), b_line), ()):
                node = loop.node
                if type(node.target) is ast.Name and node.target.id == name:
                    it = node.iter
                    if type(it) is ast.Call and not it.args and not it.keywords and type(it.func) is ast.Attribute \
                            and it.func.attr in ("modules", "children") and self.call_name(it, ctx) is None:
                        it = it.func.value
                    if type(it) in (ast.Attribute, ast.Subscript, ast.Name):
                        source = it
        if source is None:
            return name
        root = source
        while type(root) in (ast.Attribute, ast.Subscript):
            root = root.value
        if type(root) is not ast.Name or root.id == name or self.qualname(source, ctx) is not None:
            return name
        if self.moved_between(name, ctx, b_line - 1, line) or self.passed_between(name, ctx, b_line, line):
            return None
        func = ctx.func
        if func is not None and func.cls is not None and func.params and root.id == func.params[0]:
            first = source
            while type(first.value) in (ast.Attribute, ast.Subscript):
                first = first.value
            return f"{root.id}.{first.attr}" if type(first) is ast.Attribute else None
        return self.module_alias_root(root.id, ctx, line, _depth + 1)

    def _for_loops_at(self) -> dict:
        table = self._cache.get("rt_for_at")
        if table is None:
            table = {}
            for loop in self.loops:
                if type(loop.node) in (ast.For, ast.AsyncFor):
                    table.setdefault((id(loop.ctx.scope), loop.node.lineno), []).append(loop)
            self._cache["rt_for_at"] = table
        return table

    # ------------------------------------------------------------------ weight ties
    def class_dropout(self, cls) -> bool:
        """A method of class ``cls`` (its own, not inherited) builds or calls dropout with a
        rate that is visibly above zero (the default, a literal, a constant of a project
        module: ``nn.Dropout(config.DROPOUT)``) and not ``training=False``."""
        for method in cls.methods.values():
            for call, ctx in method.calls:
                q = self.call_name(call, ctx)
                if q not in DROPOUT_FUNCTIONS and q not in DROPOUT_MODULES:
                    continue
                function = q in DROPOUT_FUNCTIONS
                if self.const(self.kwarg(call, "training", 2 if function else None), ctx) is False:
                    continue
                p = self.kwarg(call, "p", 1 if function else 0)
                rate = self.const(p, ctx) if p is not None else 0.5
                if type(rate) in (int, float) and rate > 0:
                    return True
                if type(p) is ast.Name and ctx.func is method and self._param_rate(cls, method, p.id):
                    return True
        return False

    def _param_rate(self, cls, method, name: str, depth: int = 0) -> bool:
        """The dropout rate parameter ``name`` of ``method`` (``nn.Dropout(drop)``) is visibly
        above zero: a constructor call of ``cls`` in the module leaves it at a positive
        default (``drop=0.1``), or passes a positive literal or such a parameter of its own
        class (``Block(dim, heads, drop)`` in ``Net(..., drop=0.1)`` built here with its
        default); one level. A class built only in other modules is not told (what they pass
        is not seen: ``Net(4, drop=0.0)``)."""
        args = method.node.args
        names = [a.arg for a in args.posonlyargs + args.args]
        if name not in names and name not in [a.arg for a in args.kwonlyargs]:
            return False
        default = param_default(args, name)
        if method.name != "__init__":
            value = self.const(default, method.ctx) if default is not None else None
            return type(value) in (int, float) and value > 0
        passed = []
        defaulted = False  # a construction in the module leaves it at its default
        for call, ctx in self.calls:
            if type(call.func) is ast.Name and call.func.id == cls.name and self.class_named(cls.name, ctx) is cls:
                index = names.index(name) - 1 if name in names else None
                arg = self.kwarg(call, name, index)
                if arg is not None:
                    passed.append((arg, ctx))
                elif not any(type(a) is ast.Starred for a in call.args) and not any(k.arg is None for k in call.keywords):
                    defaulted = True
        if default is not None and defaulted:  # (built elsewhere only: what is passed there is not seen)
            value = self.const(default, method.ctx)
            if type(value) in (int, float) and value > 0:
                return True
        for arg, ctx in passed:
            value = self.const(arg, ctx)
            if type(value) in (int, float) and value > 0:
                return True
            if type(arg) is ast.Name and depth < 1 and ctx.func is not None and ctx.func.cls is not None \
                    and self._param_rate(ctx.func.cls, ctx.func, arg.id, depth + 1):
                return True
        return False

    def weight_ties(self) -> list[tuple[ast.Attribute, ast.Attribute, Ctx]]:
        """``a.x.weight = b.y.weight`` (both sides attribute chains of two or more levels
        ending in the same parameter name): ``(target, value, ctx)``."""
        if "rt_ties" in self._cache:
            return self._cache["rt_ties"]
        out = []
        for target, value, ctx in self.attr_stores:
            if type(value) is not ast.Attribute or value.attr != target.attr or target.attr not in _PARAM_NAMES:
                continue
            if type(target.value) not in (ast.Attribute, ast.Subscript) or type(value.value) not in (
                    ast.Attribute, ast.Subscript):
                continue
            if self.qualname(value, ctx) is not None:
                continue
            out.append((target, value, ctx))
        self._cache["rt_ties"] = out
        return out

    # ------------------------------------------------------------------ computations
    def computes(self, call: ast.Call, ctx: Ctx) -> bool:
        """A call that runs an XLA computation: a sync (``torch_xla.sync()``,
        ``xm.mark_step()``, ``barrier=True``), a host read of a device value (``.item()``,
        ``.cpu()``, ``print(t)``, ``float(t)``), or a module function that syncs or trains."""
        if self.is_sync_call(call, ctx):
            return True
        f = call.func
        if type(f) is ast.Attribute and f.attr in _READS and self.call_name(call, ctx) is None \
                and self.tensor_kind(f.value, ctx) == "device":
            return True
        if type(f) is ast.Name and f.id in _BUILTIN_READS and call.args and self.lookup(f.id, ctx, f.lineno) is None \
                and any(type(a) is not ast.Starred and self.tensor_kind(a, ctx) == "device" for a in call.args):
            return True  # print(t), float(t): the value is computed to be shown (measured on 2.9)
        return any(self.func_syncs(g) or self.does_step(g) for g in self.function_of(f, ctx))

    def computes_before(self, ctx: Ctx, line: int) -> ast.AST | None:
        """The first call or training loop in ``ctx``'s function (or module level) before
        ``line`` that runs an XLA computation whenever code at ``ctx`` runs (its branches
        are all around ``ctx``); None when none is seen."""
        first = self._first_computations().get(id(ctx.scope))
        if first is None:
            return None
        (call, cctx), (loop, lctx) = first
        for node, nctx, end in ((call, cctx, call.lineno if call is not None else None),
                                (loop, lctx, loop.end_lineno if loop is not None else None)):
            if node is not None and end < line and self.branch_frames(nctx) <= self.branch_frames(ctx) \
                    and not self.exclusive((node, nctx), (_Line(line), ctx)):
                return node
        return None

    def _first_computations(self) -> dict:
        """``id(scope) -> ((first computing call, ctx), (training loop that ends first, ctx))``
        in XLA-on code."""
        table = self._cache.get("rt_firstcomp")
        if table is None:
            table = {}
            none = ((None, None), (None, None))
            for call, c in self.calls:
                if self.computes(call, c) and self.in_xla_code(c):
                    old = table.get(id(c.scope), none)
                    if old[0][0] is None or call.lineno < old[0][0].lineno:
                        table[id(c.scope)] = ((call, c), old[1])
            for loop in self.loops:
                node = loop.node
                if getattr(node, "end_lineno", None) is None or not self.is_step_loop(loop) \
                        or not self.in_xla_code(loop.ctx):
                    continue
                old = table.get(id(loop.ctx.scope), none)
                if old[1][0] is None or node.end_lineno < old[1][0].end_lineno:
                    table[id(loop.ctx.scope)] = (old[0], (node, loop.ctx))
            self._cache["rt_firstcomp"] = table
        return table


class _Line:
    """A stand-in node with just a line (for :meth:`exclusive`)."""

    __slots__ = ("lineno",)

    def __init__(self, lineno: int):
        self.lineno = lineno


_PARAM_NAMES = frozenset({"weight", "bias"})
_DTYPE_NAMES = frozenset({"float", "float32", "float64", "double", "float16", "half", "bfloat16", "int",
                          "int32", "int64", "long", "int16", "short", "int8", "uint8", "bool"})


def frames_within(inner, outer, limit: int = 64) -> bool:
    """The branch frames ``inner`` (a chain) enclose ``outer``: every branch that code at
    ``inner`` sits in, code at ``outer`` sits in too (``inner`` is a tail of ``outer``, or
    each of its tests appears in ``outer`` with the same polarity: two ``if spmd:`` blocks).
    Chains longer than ``limit`` are compared by identity only."""
    if not inner:
        return True
    node = outer or None
    keys = set()
    depth = 0
    while node is not None:
        if node is inner:
            return True
        depth += 1
        if depth <= limit and type(node.frame) is tuple and _expr_key(node.frame[0]) is not None:
            keys.add((_expr_key(node.frame[0]), node.frame[1]))
        node = node.parent
    if depth > limit:
        return False
    node, depth = inner, 0
    while node is not None:
        depth += 1
        frame = node.frame
        if depth > limit or type(frame) is not tuple or (_expr_key(frame[0]), frame[1]) not in keys:
            return False
        node = node.parent
    return True


def _only_main_guard(frames, base) -> bool:
    """No branch frame between ``base`` (the function's own frames) and ``frames`` other
    than ``if __name__ == "__main__":``."""
    node = frames or None
    while node is not None and node is not base:
        frame = node.frame
        if not (type(frame) is tuple and frame[1] and _is_main_guard(frame[0])):
            return False
        node = node.parent
    return True


def _under(text: str | None, name: str) -> bool:
    """``text`` is ``name`` or a chain under it (``model.fc`` under ``model``)."""
    return text is not None and (text == name or text.startswith(name + "."))


def _any_between(lines: list[int], after: int, upto: int) -> bool:
    """Some line of the sorted ``lines`` is in ``(after, upto]``."""
    i = bisect.bisect_right(lines, after)
    return i < len(lines) and lines[i] <= upto

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
- :meth:`Runtime.computes_before`: a call, loop or helper before a line of a function that
  runs an XLA computation (a sync, a training loop, a host read of a device value).

Every answer is memoised in ``self._cache``; indexes are built once per module.
"""

from __future__ import annotations

import ast

from .scopes import UNKNOWN, Ctx

XLA_DEVICE_CALLS = ("torch_xla.device", "torch_xla.core.xla_model.xla_device", "torch_xla.runtime.xla_device")
#: the packages of the SPMD sharding API (the old experimental spelling until 2.4)
SPMD_PACKAGES = ("torch_xla.distributed.spmd", "torch_xla.experimental.xla_sharding",
                 "torch_xla.experimental.spmd_fully_sharded_data_parallel")
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


def dotted(expr) -> str | None:
    """``model``, ``self.fc``, ``a.b.c`` for a name or attribute chain; else None."""
    parts = []
    node = expr
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class Runtime:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    # ------------------------------------------------------------------ SPMD
    def spmd_program(self) -> bool:
        """True when XLA-on code turns SPMD on (``xr.use_spmd()``, ``XLA_USE_SPMD`` set to a
        true value, or a call of the sharding API, which raises without it) and the module
        starts no second process (a multi-process launch runs one process per device)."""
        if "spmd_program" in self._cache:
            return self._cache["spmd_program"]
        on = False
        for call, ctx in self.calls:
            q = self.call_name(call, ctx)
            if q is not None and (q == "torch_xla.runtime.use_spmd" or q.startswith(SPMD_PACKAGES)) \
                    and self.in_xla_code(ctx):
                on = True
                break
        if not on:
            for key, _, value, ctx in self.env_writes():
                if key == "XLA_USE_SPMD" and self.const(value, ctx) in ("1", "true", "True", 1, True) \
                        and self.in_xla_code(ctx):
                    on = True
                    break
        if on and any(not single for _, _, _, single in self.launches()):
            on = False
        self._cache["spmd_program"] = on
        return on

    # ------------------------------------------------------------------ devices
    def device_place(self, expr, ctx: Ctx, _depth: int = 0) -> str | None:
        """``"xla"`` when a device expression may be the XLA device and every value it may
        have is seen (``torch_xla.device()``, ``"xla"``, ``torch.device("xla", 0)``, a name
        bound to one, either arm of ``a if t else b``); ``"cpu"`` when it is visibly the
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
                return None
            if t in (ast.Name, ast.Attribute) and self.qualname(e, c) is None:
                vals = self.values(e, c)
                if not vals:
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

    # ------------------------------------------------------------------ module moves
    def _moves_index(self) -> dict:
        """``(id(scope), receiver text) -> [(line, call, ctx)]`` of every move-method call."""
        index = self._cache.get("rt_moves")
        if index is None:
            index = {}
            for call, ctx in self.calls:
                f = call.func
                if type(f) is ast.Attribute and f.attr in MOVE_METHODS:
                    key = dotted(f.value)
                    if key is not None:
                        index.setdefault((id(ctx.scope), key), []).append((call.lineno, call, ctx))
            self._cache["rt_moves"] = index
        return index

    def moves(self, receiver: str, ctx: Ctx) -> list[tuple[int, ast.Call, Ctx]]:
        """The move calls of ``receiver`` (``"model"``, ``"self.fc"``) in ``ctx``'s scope and
        of the chains under it (``model.fc.to(...)`` moves part of ``model``), by line."""
        out = []
        for (scope, key), recs in self._moves_index().items():
            if scope == id(ctx.scope) and (key == receiver or key.startswith(receiver + ".")
                                           or receiver.startswith(key + ".")):
                out.extend(recs)
        out.sort(key=lambda r: r[0])
        return out

    def passes(self, name: str, ctx: Ctx) -> list[tuple[int, ast.Call, Ctx]]:
        """Calls in ``ctx``'s scope that take ``name`` (or a chain under it) as an argument,
        other than torch_xla's sharding API and Python builtins: they may move it."""
        index = self._cache.get("rt_passes")
        if index is None:
            index = {}
            for call, c in self.calls:
                q = self.call_name(call, c) or ""
                if q.startswith(_INERT_PREFIXES):
                    continue
                for arg in list(call.args) + [k.value for k in call.keywords]:
                    node = arg.value if type(arg) is ast.Starred else arg
                    while type(node) in (ast.Attribute, ast.Subscript):
                        node = node.value
                    if type(node) is ast.Name:
                        index.setdefault((id(c.scope), node.id), []).append((call.lineno, call, c))
            self._cache["rt_passes"] = index
        return index.get((id(ctx.scope), name.split(".")[0]), [])

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
        return True

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
            for m_line, m_call, _ in self.moves(root, ctx):  # self.to(...), self.<x>.to(...)
                key = dotted(m_call.func.value)
                if bound <= m_line <= line and (key == root or key == name or key.startswith(name + ".")):
                    return None
            return bound
        bindings = self.lookup(name, ctx, line)
        if not bindings:
            return None
        lines = []
        for b_line, kind, target, b_ctx in bindings:
            if kind != "value" or b_ctx is None or b_ctx.scope is not ctx.scope:
                return None
            if not self.host_built(target, b_ctx):
                return None
            lines.append(b_line)
        bound = max(lines)
        if any(bound < m_line <= line for m_line, _, _ in self.moves(name, ctx)):
            return None
        if any(bound < p_line <= line for p_line, _, _ in self.passes(name, ctx)):
            return None
        return bound

    # ------------------------------------------------------------------ weight ties
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
        ``.cpu()``), or a module function that syncs or trains."""
        if self.is_sync_call(call, ctx):
            return True
        f = call.func
        if type(f) is ast.Attribute and f.attr in _READS and self.call_name(call, ctx) is None \
                and self.tensor_kind(f.value, ctx) == "device":
            return True
        return any(self.func_syncs(g) or self.does_step(g) for g in self.function_of(f, ctx))

    def computes_before(self, ctx: Ctx, line: int) -> ast.AST | None:
        """The first call or training loop in ``ctx``'s function (or module level) before
        ``line`` that runs an XLA computation; None when none is seen."""
        for call, c in (ctx.func.calls if ctx.func is not None else self._module_calls()):
            if call.lineno >= line or c.scope is not ctx.scope:
                continue
            if self.computes(call, c) and self.in_xla_code(c):
                return call
        for loop in self.loops:
            lc = loop.ctx
            if lc.scope is ctx.scope and loop.node.end_lineno is not None and loop.node.end_lineno < line \
                    and self.is_step_loop(loop) and self.in_xla_code(lc):
                return loop.node
        return None

    def _module_calls(self):
        calls = self._cache.get("rt_modcalls")
        if calls is None:
            calls = self._cache["rt_modcalls"] = [(c, x) for c, x in self.calls if x.func is None]
        return calls


_PARAM_NAMES = frozenset({"weight", "bias"})
_DTYPE_NAMES = frozenset({"float", "float32", "float64", "double", "float16", "half", "bfloat16", "int",
                          "int32", "int64", "long", "int16", "short", "int8", "uint8", "bool"})

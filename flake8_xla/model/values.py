"""Values: what a name, ``self.attr`` or argument holds, followed through plain
assignments, tuple unpacking and helper return values; literal values of expressions.

Whatever cannot be seen is unknown (``None`` or :data:`UNKNOWN`), and unknown never fires.
"""

from __future__ import annotations

import ast

from .scopes import UNKNOWN, Ctx


class Values:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def const(self, expr: ast.AST | None, ctx: Ctx, _depth: int = 0):
        """The literal value of ``expr``, following simple constant assignments and (project
        mode) a constant of another project module its imports name (``config.DROPOUT``);
        else UNKNOWN."""
        if expr is None:
            return UNKNOWN
        t = type(expr)
        if t is ast.Constant:
            return expr.value
        if t is ast.UnaryOp and type(expr.op) is ast.USub and type(expr.operand) is ast.Constant \
                and type(expr.operand.value) in (int, float):
            return -expr.operand.value
        if t is ast.Name and _depth < 8:
            values = self.values(expr, ctx)
            if values:
                results = {repr(self.const(v, c, _depth + 1)) for v, c in values}
                first = self.const(values[0][0], values[0][1], _depth + 1)
                if len(results) == 1 and first is not UNKNOWN:
                    return first
        if t in (ast.Name, ast.Attribute) and self.project_defs is not None:
            facts = self._project_def(expr, ctx)  # config.DROPOUT: a constant of a project module
            if facts is not None and facts.has_value:
                return facts.value
        return UNKNOWN

    def const_values(self, expr: ast.AST | None, ctx: Ctx) -> list | None:
        """Every literal ``expr`` may evaluate to: both arms of ``a if t else b`` and every
        assignment of a name; None when any of them is unknown."""
        out = []
        todo = [(expr, ctx, 0)]
        while todo:
            e, c, depth = todo.pop()
            if depth > 8 or len(out) > 16:
                return None
            if type(e) is ast.IfExp:
                todo.append((e.body, c, depth + 1))
                todo.append((e.orelse, c, depth + 1))
                continue
            if type(e) is ast.Name:
                vals = self.values(e, c)
                if vals:
                    todo.extend((v, vc, depth + 1) for v, vc in vals)
                    continue
            value = self.const(e, c)
            if value is UNKNOWN:
                return None
            out.append(value)
        return out

    def may_be_none(self, expr: ast.AST | None, ctx: Ctx) -> bool:
        """Whether some binding that reaches ``expr`` (through names and both arms of
        ``a if t else b``) is the literal ``None``: ``device_ids = None`` on one branch."""
        todo = [(expr, ctx, 0)]
        seen = 0
        while todo and seen < 32:
            e, c, depth = todo.pop()
            seen += 1
            t = type(e)
            if t is ast.Constant:
                if e.value is None:
                    return True
            elif t is ast.IfExp and depth < 8:
                todo.append((e.body, c, depth + 1))
                todo.append((e.orelse, c, depth + 1))
            elif t is ast.Name and depth < 8:
                todo.extend((v, vc, depth + 1) for v, vc in self.values(e, c) or ())
        return False

    def values(self, expr: ast.AST, ctx: Ctx) -> list[tuple[ast.AST, Ctx]] | None:
        """The expressions a name or ``self.attr`` may hold at ``expr``; None when unknown.

        Plain assignments and tuple unpacking are followed; a parameter, a loop target or
        anything else that cannot be seen makes the answer unknown.
        """
        t = type(expr)
        if t is ast.Name:
            bindings = self.read_bindings(expr, ctx)
            if not bindings:
                return None
            out = []
            for _, kind, target, b_ctx in bindings:
                if kind != "value":
                    return None
                out.append((target, b_ctx))
            return out
        if t is ast.Attribute and type(expr.value) is ast.Name and ctx.func is not None:
            func = ctx.func
            if func.cls is not None and func.params and expr.value.id == func.params[0]:
                found = self.self_attr_values(func.cls, expr.attr)  # (attributes.py)
                return list(found) if found is not None else None
        return None

    def read_bindings(self, name: ast.Name, ctx: Ctx):
        """The bindings a read of ``name`` sees (:meth:`lookup`); in ``model = model.to(dev)``
        the ``model`` on the right sees the bindings before the line, not the one it makes."""
        line = getattr(name, "lineno", None)
        bindings = self.lookup(name.id, ctx, line)
        if bindings and line is not None and bindings[-1][0] == line and _reads_in_own_value(name, bindings[-1]):
            before = self.lookup(name.id, ctx, line - 1) if line > 1 else None
            return before if before and all(b[0] < line for b in before) else None
        return bindings

    def resolve_values(self, expr: ast.AST, ctx: Ctx, limit: int = 8) -> list[tuple[ast.AST, Ctx]] | None:
        """Follow names through assignments to the expressions that produced them."""
        pending = [(expr, ctx)]
        done = []
        seen = set()
        while pending:
            e, c = pending.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            if len(seen) > limit * 4:
                return None
            if type(e) in (ast.Name, ast.Attribute) and self.qualname(e, c) is None:
                vals = self.values(e, c)
                if vals is None:
                    return None
                pending.extend(vals)
            elif type(e) is ast.Call and self.call_name(e, c) is None and type(e.func) is ast.Name:
                funcs = self.function_of(e.func, c)
                if len(funcs) == 1 and funcs[0].returns:
                    pending.extend(funcs[0].returns)
                else:
                    done.append((e, c))
            else:
                done.append((e, c))
        return done

    def passed_arguments(self, func, name: str) -> list[tuple[ast.AST | None, ast.Call, Ctx]]:
        """What flows into parameter ``name`` of module function ``func``: for every call of
        ``func`` in the module (:meth:`calls_of`, in its order), ``(argument, call, ctx)``,
        the argument being the expression the call passes, ``None`` when it passes none (the
        default) or :data:`UNKNOWN` when a splat may supply it (:meth:`argument_for`).

        The union over call sites, memoised per (function, parameter): each call's
        argument is found once however many uses of the parameter ask (a function with M
        loops over its parameter, called from N places, costs N, not M times N). The queries
        that follow a parameter to what its callers pass derive their answers from this one
        and memoise them per (function, parameter) too (:meth:`param_arguments`,
        ``loader_sources``, ``optimizer_constructions``, ``iterates_device_loader``). Do not
        modify the list returned."""
        key = ("passed", id(func), name)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = [(self.argument_for(call, cctx, func, name), call, cctx)
                                        for call, cctx in self.calls_of(func)]
        return found

    def param_arguments(self, func, param: str) -> list[tuple[ast.AST, Ctx]] | None:
        """The arguments every visible call of ``func`` passes for ``param``, as ``(expr,
        ctx)`` (:meth:`passed_arguments`); None when a call hides it (a splat), passes none
        (the default) or nothing in the module calls ``func``. Memoised per (function,
        parameter): every use of the parameter gets the same list (do not modify it)."""
        key = ("pargs", id(func), param)
        cache = self._cache
        if key not in cache:
            passed = self.passed_arguments(func, param)
            cache[key] = [(arg, cctx) for arg, _, cctx in passed] \
                if passed and all(isinstance(arg, ast.AST) for arg, _, _ in passed) else None
        return cache[key]

    def single_value(self, expr: ast.AST, ctx: Ctx) -> tuple[ast.AST, Ctx] | None:
        """``(value, its ctx)`` when every value ``expr`` may hold (:meth:`values`) is one
        expression seen in the module, else None."""
        values = self.values(expr, ctx)
        if not values or len(values) != 1 or values[0][1] is None:
            return None
        return values[0]

    def kwarg(self, call: ast.Call, name: str, pos: int | None = None):
        """The argument passed as keyword ``name`` or at position ``pos``.

        Returns the expression, ``None`` when absent, or UNKNOWN when a ``*args`` or
        ``**kwargs`` splat could supply it.
        """
        for kw in call.keywords:
            if kw.arg == name:
                return kw.value
        if pos is not None:
            for i, arg in enumerate(call.args):
                if type(arg) is ast.Starred:
                    return UNKNOWN
                if i == pos:
                    return arg
        if any(kw.arg is None for kw in call.keywords):
            return UNKNOWN
        return None


def _reads_in_own_value(name: ast.Name, binding) -> bool:
    """``name`` is read inside the value its own binding assigns (``x = f(x)``)."""
    _, kind, target, _ = binding
    if kind == "item":
        target = target[0]
    elif kind != "value":
        return False
    if not isinstance(target, ast.expr) or getattr(target, "end_lineno", None) is None:
        return False
    pos = (name.lineno, name.col_offset)
    return (target.lineno, target.col_offset) <= pos < (target.end_lineno, target.end_col_offset)

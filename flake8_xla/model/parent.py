"""The launching process: the code that runs before a multi-process launch in the process
that launches (module level, the ``__main__`` block, the functions on the way to the
launch call), the statement each of its calls belongs to, where SPMD mode is switched on,
and which calls may run in one process with which others.
"""

from __future__ import annotations

import ast
import bisect

from .scopes import Ctx

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
#: statements with mutually exclusive arms (``try`` body / handlers, ``match`` cases)
_ARMED = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None), getattr(ast, "Match", None)) if t is not None)
_EXPECTS_ERROR = ("assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "raises")


class ParentCode:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def multi_launches(self) -> list[tuple[ast.Call, Ctx]]:
        """Launch calls that start more than one process, in XLA-on code (given a function:
        a bare ``torch_xla.launch()`` launches nothing)."""
        return [(call, ctx) for call, ctx, _, single in self.launches()
                if not single and self.in_xla_code(ctx) and self.kwarg(call, "fn", 0) is not None]

    #: how many later sites a call is checked against for "another branch" (bounded work)
    _SITE_LOOKAHEAD = 8

    def calls_before_launch(self) -> list[tuple[ast.Call, Ctx, ast.stmt, ast.Call]]:
        """Calls that run in the launching process before a multi-process launch:
        ``(call, ctx, statement, launch)``. They sit in the launch's own function (or at
        module level) before the launch call or inside its arguments, or before a call on
        the way to it (``main()`` in the ``__main__`` block, followed up the callers that are
        not launched code, 8 levels); a call on the other branch of an ``if`` than the
        launch, inside a ``lambda`` or in a nested function is left out. Linear: each
        scope's calls are matched to the sites after them by one sort and a bisect."""
        if "before_launch" in self._cache:
            return self._cache["before_launch"]
        out = []
        for func, sites in self._launch_sites().items():
            owner = func.node if func is not None else self.tree
            index = self._statements(owner)
            sites.sort(key=lambda r: (r[0].lineno, r[0].col_offset))
            starts = [(site.lineno, site.col_offset) for site, _, _ in sites]
            site_ids = {id(site) for site, _, _ in sites}
            for call, ctx in (func.calls if func is not None else self._module_calls()):
                if id(call) in site_ids or ctx.func is not func or ctx.scope.kind == "lambda":
                    continue
                stmt = index.get(id(call))
                if stmt is None:
                    continue
                pos = (call.lineno, call.col_offset)
                i = bisect.bisect_right(starts, pos)
                launch = None
                if i:  # inside the arguments of the launch just before it
                    site, sctx, origin = sites[i - 1]
                    end = (site.end_lineno or site.lineno, site.end_col_offset or 0)
                    if site is origin and (call.end_lineno or call.lineno, call.end_col_offset or 0) <= end:
                        launch = origin
                for site, sctx, origin in sites[i:i + self._SITE_LOOKAHEAD] if launch is None else ():
                    if not self._exclusive_in(owner, (call, ctx), (site, sctx)):
                        launch = origin
                        break
                if launch is not None:
                    out.append((call, ctx, stmt, launch))
        out.sort(key=lambda r: (r[0].lineno, r[0].col_offset))
        self._cache["before_launch"] = out
        return out

    def calls_after_launch(self) -> list[tuple[ast.Call, Ctx, ast.Call]]:
        """Calls that run in the launching process after a multi-process launch returned:
        ``(call, ctx, launch)``, in source order. The mirror of :meth:`calls_before_launch`:
        they sit in the launch's own function (or at module level) after the launch call
        ends, or after a call on the way to it (``main()`` in the ``__main__`` block); a call
        on the other branch of an ``if`` (or ``try`` / ``match`` arm) than the launch, inside
        a ``lambda`` or in a nested function is left out. Linear: each scope's calls are
        matched to the sites that end before them by one sort and a bisect."""
        if "after_launch" in self._cache:
            return self._cache["after_launch"]
        out = []
        for func, sites in self._launch_sites().items():
            owner = func.node if func is not None else self.tree
            index = self._statements(owner)
            by_end = sorted(sites, key=lambda r: (r[0].end_lineno or r[0].lineno, r[0].end_col_offset or 0))
            ends = [(s.end_lineno or s.lineno, s.end_col_offset or 0) for s, _, _ in by_end]
            site_ids = {id(site) for site, _, _ in sites}
            for call, ctx in (func.calls if func is not None else self._module_calls()):
                if id(call) in site_ids or ctx.func is not func or ctx.scope.kind == "lambda" \
                        or id(call) not in index:
                    continue
                i = bisect.bisect_right(ends, (call.lineno, call.col_offset))
                for site, sctx, origin in reversed(by_end[max(0, i - self._SITE_LOOKAHEAD):i]):
                    if not self._exclusive_in(owner, (call, ctx), (site, sctx)):
                        out.append((call, ctx, origin))
                        break
        out.sort(key=lambda r: (r[0].lineno, r[0].col_offset))
        self._cache["after_launch"] = out
        return out

    def _launch_sites(self) -> dict:
        """Per scope (function, or None for module level): ``[(site, ctx, launch)]``, the
        multi-process launches in it and the calls in it on the way to one."""
        if "launch_sites" not in self._cache:
            by_scope: dict = {}
            keyed: dict = {}
            seen: set[int] = set()
            for launch, lctx in self.multi_launches():
                for func, site, sctx in [(lctx.func, launch, lctx)] + self._callers_chain(lctx.func):
                    if id(site) in seen:
                        continue
                    seen.add(id(site))
                    k = id(func) if func is not None else None
                    keyed[k] = func
                    by_scope.setdefault(k, []).append((site, sctx, launch))
            self._cache["launch_sites"] = {keyed[k]: v for k, v in by_scope.items()}
        return self._cache["launch_sites"]

    def runs_before_launch(self, node: ast.AST, ctx: Ctx, launch: ast.Call, lctx: Ctx) -> bool:
        """True when ``node`` visibly runs in the launching process before ``launch``: before
        it (or before a call on the way to it, see :meth:`calls_before_launch`) and not on
        another branch, directly or in a module function such a call reaches."""
        entries = self._earliest_runs(node, ctx)
        for func, site, sctx in [(lctx.func, launch, lctx)] + self._callers_chain(lctx.func):
            for pos, n, nctx in entries.get(id(func) if func is not None else None, ())[:self._SITE_LOOKAHEAD]:
                if pos < (site.lineno, site.col_offset) and not self.exclusive((n, nctx), (site, sctx)):
                    return True
        return False

    def _earliest_runs(self, node, ctx) -> dict:
        """Per scope: where ``node`` runs from it, earliest first: ``node`` itself in its own
        function, and the calls of functions from which its function is reached."""
        key = ("earliest", id(node))
        if key in self._cache:
            return self._cache[key]
        table: dict = {}
        table.setdefault(id(ctx.func) if ctx.func is not None else None, []).append(
            ((node.lineno, node.col_offset), node, ctx))
        if ctx.func is not None:  # functions from which node's function is reached (one pass)
            reaches = self.closure_over_callers(("reaches", id(ctx.func)), {id(ctx.func): True})
            for call, cctx in self.calls:
                if cctx.scope.kind != "lambda" and any(reaches.get(id(f)) for f in self.function_of(call.func, cctx)):
                    table.setdefault(id(cctx.func) if cctx.func is not None else None, []).append(
                        ((call.lineno, call.col_offset), call, cctx))
        for entries in table.values():
            entries.sort(key=lambda r: r[0])
        self._cache[key] = table
        return table

    def _module_calls(self) -> list[tuple[ast.Call, Ctx]]:
        if "module_calls" not in self._cache:
            self._cache["module_calls"] = [(c, x) for c, x in self.calls if x.func is None]
        return self._cache["module_calls"]

    def _callers_chain(self, func) -> list:
        """``(function or None, call site, ctx)`` for each call of ``func`` from code that is
        not launched, and of their functions, up to module level (8 levels; memoised)."""
        if func is None:
            return []
        key = ("callers_chain", id(func))
        if key in self._cache:
            return self._cache[key]
        out = []
        frontier = [func]
        done: set[int] = set()
        depth = 0
        while frontier and depth < 8:
            depth += 1
            nxt = []
            for f in frontier:
                if id(f) in done:
                    continue
                done.add(id(f))
                for call, ctx in self.calls_of(f):
                    if self.is_launched(ctx) or ctx.scope.kind == "lambda":
                        continue
                    out.append((ctx.func, call, ctx))
                    if ctx.func is not None:
                        nxt.append(ctx.func)
            frontier = nxt
        self._cache[key] = out
        return out

    def _exclusive_in(self, owner: ast.AST, a, b) -> bool:
        """:meth:`exclusive` for a node of ``owner``'s own code (see :meth:`_statements`).
        Without a ``try`` handler or ``match`` in that code only opposite branches exclude:
        the arms in nested functions lie within their bodies, never on a line of ``owner``'s
        own code, so the walk of ``owner`` for arms is skipped."""
        self._statements(owner)
        if self._cache[("own_arms", id(owner))]:
            return self.exclusive(a, b)
        fa, fb = self.branch_frames(a[1]), self.branch_frames(b[1])
        return any((k, not p) in fb for k, p in fa)

    def _statements(self, owner: ast.AST) -> dict[int, ast.stmt]:
        """id(call) -> the innermost statement of ``owner``'s own code holding it (the header
        of a compound statement for calls in its test, iterable or items). Nested function
        bodies and lambdas are not its own code; class bodies and default values are."""
        key = ("stmts", id(owner))
        if key in self._cache:
            return self._cache[key]
        index: dict[int, ast.stmt] = {}
        arms = False  # a try with handlers or a match: exclusive arms (see _exclusive_in)
        stack = list(getattr(owner, "body", ()))
        while stack:
            stmt = stack.pop()
            if type(stmt) in (ast.ExceptHandler, getattr(ast, "match_case", ast.ExceptHandler)):
                stack.extend(stmt.body)
                continue
            if type(stmt) in _ARMED:
                arms = True
            is_def = type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef)
            for field, value in ast.iter_fields(stmt):
                if field in _BLOCKS and type(value) is list:
                    if not is_def:
                        stack.extend(value)
                    continue
                exprs = value if type(value) is list else [value]
                todo = [e for e in exprs if isinstance(e, ast.AST)]
                while todo:
                    node = todo.pop()
                    if type(node) is ast.Call:
                        index[id(node)] = stmt
                    if type(node) is ast.Lambda:
                        todo.extend(node.args.defaults)
                        continue
                    if isinstance(node, ast.stmt):
                        stack.append(node)
                        continue
                    todo.extend(ast.iter_child_nodes(node))
        self._cache[key] = index
        self._cache[("own_arms", id(owner))] = arms
        return index

    # -- SPMD mode ------------------------------------------------------------------------

    def spmd_switches(self) -> list[tuple[ast.AST, Ctx]]:
        """Where XLA-on code turns SPMD mode on: ``xr.use_spmd()`` calls and writes of
        ``XLA_USE_SPMD`` to the environment with a value other than ``"0"`` / ``""`` (the
        first 16 in source order: a program switches once; bounded work per query)."""
        if "spmd_switches" not in self._cache:
            out = [(call, ctx) for call, ctx in self.calls_to("torch_xla.runtime.use_spmd")
                   if self.in_xla_code(ctx)]
            child = {id(r[1]) for r in self._child_env_writes()}  # set for a subprocess, not here
            for key, node, value, ctx in self.env_writes():
                if key == "XLA_USE_SPMD" and self.in_xla_code(ctx) and id(node) not in child:
                    v = self.const(value, ctx) if isinstance(value, ast.AST) else None
                    if v in ("0", "", 0, False, "false", "False"):
                        continue
                    out.append((node, ctx))
            out.sort(key=lambda r: (r[0].lineno, r[0].col_offset))
            self._cache["spmd_switches"] = out[:16]
        return self._cache["spmd_switches"]

    def same_run(self, a: tuple[ast.AST, Ctx], b: tuple[ast.AST, Ctx]) -> bool:
        """True when two nodes visibly run in one program run: not on exclusive branches,
        and both at module level, in one function, one's function reaches the other's
        (through calls, or as a launch target), or one is at module level and the other's
        function runs from module-level code. Two functions only a caller could choose
        between, or a function nothing in the module calls, are unknown: False."""
        if self.exclusive(a, b):
            return False
        fa, fb = a[1].func, b[1].func
        if fa is fb:
            return True
        if fa is None or fb is None:
            return id(fb if fa is None else fa) in self._run_from_module()
        return id(fb) in self._reach(fa) or id(fa) in self._reach(fb)

    def _reach(self, func) -> set[int]:
        key = ("reach1", id(func))
        if key not in self._cache:
            self._cache[key] = self.reachable([func])
        return self._cache[key]

    def _run_from_module(self) -> set[int]:
        """ids of functions module-level code runs: those it calls, the launch targets, and
        what they call in the module."""
        if "run_from_module" not in self._cache:
            roots = [f for call, ctx in self._module_calls() for f in self.function_of(call.func, ctx)]
            self._cache["run_from_module"] = self.reachable(roots + self.launch_targets())
        return self._cache["run_from_module"]

    def expects_error(self, node: ast.AST, ctx: Ctx) -> bool:
        """True when ``node`` sits in a ``with self.assertRaises(...)`` / ``pytest.raises``
        block of its function: a test that the call fails, on purpose."""
        owner = ctx.func.node if ctx.func is not None else self.tree
        key = ("raises_spans", id(owner))
        spans = self._cache.get(key)
        if spans is None:
            spans = []
            todo = list(getattr(owner, "body", ()))
            while todo:
                stmt = todo.pop()
                if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                    continue
                if type(stmt) in (ast.With, ast.AsyncWith) and any(
                        type(i.context_expr) is ast.Call and type(i.context_expr.func) is ast.Attribute
                        and i.context_expr.func.attr in _EXPECTS_ERROR for i in stmt.items):
                    spans.append((stmt.lineno, stmt.end_lineno or stmt.lineno))
                for field in _BLOCKS:
                    for s in getattr(stmt, field, None) or ():
                        todo.extend([s] if isinstance(s, ast.stmt) else getattr(s, "body", ()))
            self._cache[key] = spans
        return any(lo <= node.lineno <= hi for lo, hi in spans)

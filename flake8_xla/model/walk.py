"""The one walk: an explicit-stack traversal of the module that records, for every call,
attribute chain, loop, import and assignment, the context it sits in.

Answers nothing itself. It fills the records every other part of the model reads:
``calls``, ``attrs``, ``imports``/``import_froms``, ``functions``, ``classes``, ``loops``,
subscript loads and stores, comparisons, name loads, the bindings of every scope, and the
``if`` tests that guard a torch_xla import. Iterative, so any tree ``ast.parse`` accepts
can be walked.
"""

from __future__ import annotations

import ast
import bisect

from ..api_table import star_names
from .scopes import (
    _FALLBACK, _GUARDED, _OFF, TERMINATORS, ClassInfo, Ctx, FunctionInfo, LoopInfo, Scope,
    _all_args, _catches_import_error, chain_any, push_frame, _child_fields, _expr_key, _is_main_guard,
)


class Walker:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def _walk(self) -> None:
        module_ctx = Ctx(self.module_scope, None, (), ())
        stack: list = []
        self._push_block(stack, getattr(self.tree, "body", []), module_ctx)
        if not isinstance(self.tree, ast.Module):
            stack.append((self.tree, module_ctx))
        handlers = self._handlers()
        child_fields = _child_fields
        AST = ast.AST
        Constant = ast.Constant  # a leaf with nothing to record: never pushed
        pop = stack.pop
        push = stack.append
        while stack:
            node, ctx = pop()
            handler = handlers.get(type(node))
            if handler is not None:
                if handler(node, ctx, stack):
                    continue
            for field in child_fields(type(node)):
                value = getattr(node, field, None)
                if value is None:
                    continue
                if type(value) is list:
                    for item in value:
                        if type(item) is not Constant and isinstance(item, AST):
                            push((item, ctx))
                elif type(value) is not Constant and isinstance(value, AST):
                    push((value, ctx))

    def _handlers(self):
        return {
            ast.FunctionDef: self._on_function,
            ast.AsyncFunctionDef: self._on_function,
            ast.Lambda: self._on_lambda,
            ast.ClassDef: self._on_class,
            ast.Import: self._on_import,
            ast.ImportFrom: self._on_import_from,
            ast.Assign: self._on_assign,
            ast.AnnAssign: self._on_ann_assign,
            ast.AugAssign: self._on_aug_assign,
            ast.NamedExpr: self._on_named_expr,
            ast.For: self._on_for,
            ast.AsyncFor: self._on_for,
            ast.While: self._on_while,
            ast.If: self._on_if,
            ast.IfExp: self._on_ifexp,
            ast.Try: self._on_try,
            getattr(ast, "TryStar", ast.Try): self._on_try,
            ast.ExceptHandler: self._on_handler,
            ast.Global: self._on_global,
            ast.Nonlocal: self._on_global,
            ast.Call: self._on_call,
            ast.Attribute: self._on_attribute,
            ast.Name: self._on_name_star if self._star_names else self._on_name,
            ast.Subscript: self._on_subscript,
            ast.Compare: self._on_compare,
            ast.BoolOp: self._on_boolop,
            ast.ListComp: self._on_comp,
            ast.SetComp: self._on_comp,
            ast.DictComp: self._on_comp,
            ast.GeneratorExp: self._on_comp,
            ast.MatchAs: self._on_match_name,
            ast.MatchStar: self._on_match_name,
            ast.MatchMapping: self._on_match_name,
            ast.With: self._on_with,
            ast.Match: self._on_match,
            ast.AsyncWith: self._on_with,
            ast.Module: self._on_block_owner,
            ast.Return: self._on_return,
            ast.Yield: self._on_yield,
            ast.YieldFrom: self._on_yield,
            ast.Dict: self._on_dict,
        }

    @staticmethod
    def _push_block(stack, stmts, ctx):
        """Push a statement list so it is walked in source order (the stack is LIFO);
        code after ``if T: return`` runs only when ``not T``."""
        cur = ctx
        items = []
        for stmt in stmts:
            items.append((stmt, cur))
            if type(stmt) is ast.If:
                body_ends = bool(stmt.body) and _ends_block(stmt.body[-1])
                else_ends = bool(stmt.orelse) and _ends_block(stmt.orelse[-1])
                if body_ends:
                    # `if A: return / elif B: return / ...`: the code after runs only when the
                    # tests of the leading branches that end were all false
                    frames = cur.frames
                    branch = stmt
                    while True:
                        frames = push_frame(frames, (branch.test, False))
                        orelse = branch.orelse
                        if len(orelse) == 1 and type(orelse[0]) is ast.If and orelse[0].body \
                                and _ends_block(orelse[0].body[-1]):
                            branch = orelse[0]
                            continue
                        break
                    cur = Ctx(cur.scope, cur.func, cur.loops, frames)
                elif else_ends and not (len(stmt.orelse) == 1 and type(stmt.orelse[0]) is ast.If):
                    cur = Ctx(cur.scope, cur.func, cur.loops, push_frame(cur.frames, (stmt.test, True)))
        stack.extend(reversed(items))

    def _on_block_owner(self, node, ctx, stack):
        self._push_block(stack, node.body, ctx)
        return True

    def _push_exprs(self, stack, exprs, ctx):
        for e in exprs:
            if e is not None:
                stack.append((e, ctx))

    def _on_function(self, node, ctx, stack):
        cls = ctx.scope.cls if ctx.scope.kind == "class" else None
        info = FunctionInfo(node, cls, ctx)
        self.functions.append(info)
        if cls is not None:
            cls.methods[node.name] = info
        ctx.scope.bind(node.name, node.lineno, "def", info, ctx)
        args = node.args
        self._push_exprs(stack, node.decorator_list, ctx)
        self._push_exprs(stack, args.defaults, ctx)
        self._push_exprs(stack, args.kw_defaults, ctx)
        self._push_exprs(stack, [a.annotation for a in _all_args(args)], ctx)
        if node.returns is not None:
            stack.append((node.returns, ctx))
        scope = Scope("function", node, ctx.scope)
        self.scopes.append(scope)
        info.scope = scope
        for a in _all_args(args):
            scope.bind(a.arg, node.lineno, "param", info, None)
        inner = Ctx(scope, info, (), ctx.frames)
        self._push_block(stack, node.body, inner)
        return True

    def _on_lambda(self, node, ctx, stack):
        args = node.args
        self._push_exprs(stack, args.defaults, ctx)
        self._push_exprs(stack, args.kw_defaults, ctx)
        scope = Scope("lambda", node, ctx.scope)
        self.scopes.append(scope)
        for a in _all_args(args):
            scope.bind(a.arg, node.lineno, "param", None, None)
        stack.append((node.body, Ctx(scope, ctx.func, (), ctx.frames)))
        return True

    def _on_class(self, node, ctx, stack):
        info = ClassInfo(node, ctx)
        self.classes.append(info)
        ctx.scope.bind(node.name, node.lineno, "class", info, ctx)
        self._push_exprs(stack, node.decorator_list, ctx)
        self._push_exprs(stack, node.bases, ctx)
        self._push_exprs(stack, [k.value for k in node.keywords], ctx)
        scope = Scope("class", node, ctx.scope, cls=info)
        self.scopes.append(scope)
        self._push_block(stack, node.body, Ctx(scope, ctx.func, ctx.loops, ctx.frames))
        return True

    def _note_import(self, qualname, ctx, bound=None):
        """Record an import of a torch_xla module (``bound``: the name it binds, if any) and
        the ``if`` test that guards it; guards are settled after the walk
        (:meth:`_settle_guards`). An import under ``if TYPE_CHECKING:`` never runs."""
        if not (qualname == "torch_xla" or qualname.startswith("torch_xla.")):
            return
        if _type_checking_only(ctx.frames):
            return
        self._xla_imports.append((bound, ctx))
        for frame in ctx.frames:  # innermost first
            if frame is _GUARDED or frame is _FALLBACK:
                continue
            if frame is _OFF:
                break
            test, polarity = frame
            if not _is_main_guard(test):
                self._guard_candidates.append((test, polarity, ctx))
            break

    def _settle_guards(self) -> None:
        """Turn the tests around torch_xla imports into XLA guards, once the walk is done.

        An ``if`` whose branch imports torch_xla decides XLA on or off, and the tests before
        it in its ``if``/``elif`` chain mark their own branches XLA-off (those branches run
        without that import); a chain where several branches import torch_xla leaves the
        others alone. An import that already ran unconditionally (at module level, or at
        the top of an enclosing function) makes the module XLA code whatever follows: an
        ``if`` that imports one more submodule (``if FLAGS.profile: import
        torch_xla.debug.profiler``) is then no guard, and neither is a flag set by a
        try-import of one more submodule. Dynamic imports count once their callee resolves
        to ``importlib.import_module`` or the builtin ``__import__``.
        """
        for call, ctx, bound in self._dynamic_candidates:
            name = self._dynamic_import(call, ctx, 0)
            if name is not None:
                self._note_import(name, ctx, bound)
        module_wide = False
        funcs: set[int] = set()
        hard = {id(link) for link in self._hard_tries}
        for _, ctx in self._xla_imports:
            if _unconditional(ctx, hard):
                if ctx.func is None:
                    module_wide = True
                else:
                    funcs.add(id(ctx.func))

        def dominated(ctx) -> bool:
            if module_wide:
                return True
            func = ctx.func
            while func is not None:
                if id(func) in funcs:
                    return True
                func = func.ctx.func
            return False

        live = [(test, polarity) for test, polarity, ctx in self._guard_candidates if not dominated(ctx)]
        positives = {id(test) for test, polarity in live if polarity}
        for test, polarity in live:
            key = _expr_key(test)
            if key is None:
                continue
            nxt = self._elif_next.get(id(test))
            if polarity and nxt is not None and id(nxt) in positives:
                self.guard_tests[key] = (False, False)  # the next branch imports torch_xla too
            else:
                self.guard_tests[key] = (False, True) if polarity else (True, False)
            if polarity:
                subject = _selector(test)
                prev = self._elif_prev.get(id(test))
                while prev is not None and id(prev) not in self.chain_off and id(prev) not in positives:
                    self.chain_off[id(prev)] = (True, False)  # this branch of the chain: XLA off
                    if subject is not None and _selector(prev) == subject and _expr_key(prev) is not None:
                        # `backend == "nv"` before `elif backend == "tpu":` picks a backend by
                        # value: the same test elsewhere picks the same one
                        self.guard_tests.setdefault(_expr_key(prev), (True, False))
                    prev = self._elif_prev.get(id(prev))
        self.probe_flags.update(name for name, ctx in self._probe_candidates if not dominated(ctx))

    def _on_import(self, node, ctx, stack):
        for alias in node.names:
            full = alias.name
            if alias.asname:
                ctx.scope.bind(alias.asname, node.lineno, "import", full, ctx)
                self.resolvable.add(alias.asname)
            else:
                first = full.split(".", 1)[0]
                ctx.scope.bind(first, node.lineno, "import", first, ctx)
                self.resolvable.add(first)
            self.imports.append((node, alias, full, ctx))
            self._note_import(full, ctx, alias.asname or full.split(".", 1)[0])
        return True

    def _on_import_from(self, node, ctx, stack):
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                self._star_seen = True  # it may bind any name: no module flag is trusted
                if not node.level and module:
                    self._on_star_import(node, module, ctx)
                continue
            bound = alias.asname or alias.name
            if node.level:
                ctx.scope.bind(bound, node.lineno, "unknown", None, ctx)
                continue
            full = f"{module}.{alias.name}"
            ctx.scope.bind(bound, node.lineno, "import", full, ctx)
            self.resolvable.add(bound)
            self.import_froms.append((node, alias, full, ctx))
            self._note_import(full, ctx, bound)
        return True

    def _on_star_import(self, node, module, ctx):
        """``from torch_xla.core.xla_model import *``: the module is imported (XLA code), and
        the names it exports (its ``__all__``, else the public names it defines, in any
        release) are bound to ``module.name`` in this scope."""
        self._note_import(module, ctx, "*")
        for name in star_names(module, self.settings.version_text):
            ctx.scope.bind(name, node.lineno, "import", f"{module}.{name}", ctx)
            self.resolvable.add(name)

    def _bind_target(self, target, value, ctx, stack, line):
        """Bind an assignment target; ``value`` is the assigned expr or None (unknown)."""
        t = type(target)
        if t is ast.Name:
            if value is None:
                ctx.scope.bind(target.id, line, "unknown", None, ctx)
            else:
                ctx.scope.bind(target.id, line, "value", value, ctx)
                self.resolvable_values.add(target.id)
                if type(value) in (ast.Name, ast.Attribute) or dynamic_import_name(value) is not None:
                    self.resolvable.add(target.id)
        elif t in (ast.Tuple, ast.List):
            elts = target.elts
            starred = any(type(e) is ast.Starred for e in elts)  # once per target list: linear in its width
            vals = value.elts if type(value) in (ast.Tuple, ast.List) else None
            if vals is not None and (len(vals) != len(elts) or starred):
                vals = None
            for i, elt in enumerate(elts):
                if vals is None and value is not None and type(elt) is ast.Name and not starred:
                    # `loader, sampler = make()`: item i of the value (values() still says unknown)
                    ctx.scope.bind(elt.id, line, "item", (value, i), ctx)
                    continue
                self._bind_target(elt, vals[i] if vals is not None else None, ctx, stack, line)
        elif t is ast.Starred:
            self._bind_target(target.value, None, ctx, stack, line)
        elif t is ast.Attribute:
            base = target.value
            if type(base) is ast.Name and ctx.func is not None and ctx.func.cls is not None \
                    and ctx.func.params and base.id == ctx.func.params[0]:
                ctx.func.cls.attrs.setdefault(target.attr, []).append((value, ctx))
            if value is not None:
                self.attr_stores.append((target, value, ctx))
            stack.append((target, ctx))
        elif t is ast.Subscript:
            if value is not None:
                self.subscript_stores.append((target, value, ctx))
            stack.append((target, ctx))
        else:
            stack.append((target, ctx))

    def _on_assign(self, node, ctx, stack):
        value = node.value
        if type(value) is ast.Call and value.args and dynamic_import_name(value) is not None:
            bound = node.targets[0].id if len(node.targets) == 1 and type(node.targets[0]) is ast.Name else None
            self._dynamic_candidates.append((value, ctx, bound))  # xm = importlib.import_module(...)
            self._bound_dynamic.add(id(value))
        for target in node.targets:
            self._bind_target(target, node.value, ctx, stack, node.lineno)
        stack.append((node.value, ctx))
        return True

    def _on_ann_assign(self, node, ctx, stack):
        if node.value is not None:
            self._bind_target(node.target, node.value, ctx, stack, node.lineno)
            stack.append((node.value, ctx))
        elif type(node.target) is not ast.Name:
            stack.append((node.target, ctx))
        stack.append((node.annotation, ctx))
        return True

    def _on_aug_assign(self, node, ctx, stack):
        self._bind_target(node.target, None, ctx, stack, node.lineno)
        stack.append((node.value, ctx))
        return True

    def _on_named_expr(self, node, ctx, stack):
        scope = ctx.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        if type(node.target) is ast.Name:
            scope.bind(node.target.id, node.lineno, "value", node.value, ctx)
            if type(node.value) in (ast.Name, ast.Attribute):
                self.resolvable.add(node.target.id)
        stack.append((node.value, ctx))
        return True

    def _on_for(self, node, ctx, stack):
        loop = LoopInfo(node, ctx, self._call_order)
        self.loops.append(loop)
        if ctx.loops:
            ctx.loops[-1].inner.append(loop)
        stack.append((node.iter, ctx))
        self._bind_target(node.target, None, ctx, stack, node.lineno)
        self._push_block(stack, node.body, Ctx(ctx.scope, ctx.func, ctx.loops + (loop,), ctx.frames))
        self._push_block(stack, node.orelse, ctx)
        return True

    def _static_truth(self, test, ctx, depth: int = 0) -> bool | None:
        """What an ``if`` / ``while`` test is on every run, or None: a literal (``False``,
        ``0``, ``True``), ``TYPE_CHECKING`` / ``typing.TYPE_CHECKING`` (false when the program
        runs), a module constant bound to a literal ``False`` / ``0`` (each use is recorded, and
        :meth:`_rebound_flags` checks after the walk that the name is bound once and means the
        module's binding there), and ``not`` / ``and`` / ``or`` of those."""
        t = type(test)
        if t is ast.Constant:
            return bool(test.value)
        if depth > 8:
            return None  # `not not ... x` thousands deep: unknown (and no deep recursion)
        if t is ast.Name:
            if test.id == "TYPE_CHECKING":
                return False
            if (test.id in self._false_names or self._project_false((test.id,))) and id(test) not in self._shadowed:
                self._dead_by_name.append((test.id, ctx, test.lineno, id(test)))
                return False
            return None
        if t is ast.Attribute:
            if test.attr == "TYPE_CHECKING" and type(test.value) is ast.Name:
                return False
            root = test.value
            if type(root) is ast.Name and id(root) not in self._shadowed and self._project_false((root.id, test.attr)):
                self._dead_by_name.append((root.id, ctx, test.lineno, id(root)))  # config.DEBUG
                return False
            return None
        if t is ast.UnaryOp and type(test.op) is ast.Not:
            inner = self._static_truth(test.operand, ctx, depth + 1)
            return None if inner is None else not inner
        if t is ast.BoolOp:
            known = [self._static_truth(v, ctx, depth + 1) for v in test.values]
            if type(test.op) is ast.And:
                return False if False in known else True if all(k is True for k in known) else None
            return True if True in known else False if all(k is False for k in known) else None
        return None

    def _project_false(self, parts: tuple[str, ...]) -> bool:
        """Project mode: ``parts`` (``("DEBUG",)`` bound by ``from config import DEBUG``, or
        ``("config", "DEBUG")``) names a constant of another project module bound once to
        a literal ``False`` / ``0`` (the light index); its uses are checked after the walk
        like the module's own flags (the root bound once, by the import)."""
        if self.project_defs is None or self._untrusted is None or parts[0] in self._untrusted:
            return False
        table = self._cache.setdefault("project_false", {})
        found = table.get(parts)
        if found is None:
            try:
                facts = self.project_defs(parts)
            except (Exception, RecursionError):
                facts = None
            found = table[parts] = bool(facts is not None and facts.has_value and type(facts.value) in (bool, int)
                                        and not facts.value)
        return found

    def _note_dead(self, stmts) -> None:
        """Record a statement list that never runs (its span, for :meth:`in_dead_code`)."""
        if stmts:
            first, last = stmts[0], stmts[-1]
            self.dead_blocks.append(((first.lineno, first.col_offset),
                                     (last.end_lineno or last.lineno, last.end_col_offset or 0)))

    def _rebound_flags(self) -> tuple[frozenset[str], frozenset[int]]:
        """After the walk, the flags some ``if FLAG:`` was pruned on that are not a module
        constant bound exactly once (rebound anywhere: ``FLAG = True``, ``global FLAG``, an
        import, a loop target, a star import), and the ids of the pruned uses that resolve to
        another binding (a shadowing local). The walk must run again without trusting them."""
        if not self._dead_by_name:
            return frozenset(), frozenset()
        if self._star_seen:
            return frozenset(name for name, _ctx, _line, _use in self._dead_by_name), frozenset()
        bindings = self.module_scope.bindings
        rebound = set()
        shadowed = set()
        for name, ctx, line, use in self._dead_by_name:
            bound = bindings.get(name)
            if not bound or len(bound) != 1:
                rebound.add(name)
                continue
            seen = self.lookup(name, ctx, line)
            if not seen or len(seen) != 1 or seen[0] is not bound[0]:
                shadowed.add(use)
        return frozenset(rebound), frozenset(shadowed)

    def in_dead_code(self, line: int, col: int) -> bool:
        """True when position ``(line, col)`` (1-based line, 0-based column) lies in a block
        that never runs (:attr:`dead_blocks`: the body of ``if False:``, ``if TYPE_CHECKING:``,
        ``if DEBUG:`` for a module constant ``DEBUG = False`` never rebound, ...)."""
        blocks = self._cache.get("dead_sorted")
        if blocks is None or len(blocks) != len(self.dead_blocks):
            blocks = self._cache["dead_sorted"] = sorted(self.dead_blocks)  # disjoint: never nested
        pos = (line, col)
        i = bisect.bisect_right(blocks, (pos, (float("inf"), 0))) - 1
        return i >= 0 and blocks[i][0] <= pos < blocks[i][1]

    def _on_while(self, node, ctx, stack):
        self.tests.append(node.test)
        if self._static_truth(node.test, ctx) is False:  # `while False:`: only the else runs
            self._note_dead(node.body)
            stack.append((node.test, ctx))
            self._push_block(stack, node.orelse, ctx)
            return True
        loop = LoopInfo(node, ctx, self._call_order)
        self.loops.append(loop)
        if ctx.loops:
            ctx.loops[-1].inner.append(loop)
        inner = Ctx(ctx.scope, ctx.func, ctx.loops + (loop,), ctx.frames)
        stack.append((node.test, inner))
        self._push_block(stack, node.body, inner)
        self._push_block(stack, node.orelse, ctx)
        return True

    def _on_if(self, node, ctx, stack):
        orelse = node.orelse
        if len(orelse) == 1 and type(orelse[0]) is ast.If:  # `elif`: remember the tests around it
            self._elif_prev[id(orelse[0].test)] = node.test
            self._elif_next[id(node.test)] = orelse[0].test
        self.tests.append(node.test)
        stack.append((node.test, ctx))
        truth = self._static_truth(node.test, ctx)
        if truth is False:
            self._note_dead(node.body)
        else:
            self._push_block(stack, node.body, Ctx(ctx.scope, ctx.func, ctx.loops,
                                                   push_frame(ctx.frames, (node.test, True))))
        if truth is True:
            self._note_dead(node.orelse)
        else:
            self._push_block(stack, node.orelse, Ctx(ctx.scope, ctx.func, ctx.loops,
                                                     push_frame(ctx.frames, (node.test, False))))
        return True

    def _on_ifexp(self, node, ctx, stack):
        self.tests.append(node.test)
        stack.append((node.test, ctx))
        stack.append((node.body, Ctx(ctx.scope, ctx.func, ctx.loops, push_frame(ctx.frames, (node.test, True)))))
        stack.append((node.orelse, Ctx(ctx.scope, ctx.func, ctx.loops, push_frame(ctx.frames, (node.test, False)))))
        return True

    def _on_try(self, node, ctx, stack):
        guards_xla = any(
            (type(s) is ast.Import and any(a.name.split(".")[0] == "torch_xla" for a in s.names))
            or (type(s) is ast.ImportFrom and not s.level and (s.module or "").split(".")[0] == "torch_xla")
            for s in node.body
        )
        catches_import_error = any(_catches_import_error(h) for h in node.handlers)
        if guards_xla and catches_import_error:  # try: import torch_xla; HAS_XLA = True (or in else:)
            for s in node.body + node.orelse:
                if type(s) in (ast.Assign, ast.AnnAssign) and type(s.value) is ast.Constant and s.value.value is True:
                    targets = s.targets if type(s) is ast.Assign else [s.target]
                    self._probe_candidates.extend((t.id, ctx) for t in targets if type(t) is ast.Name)
        body_ctx = Ctx(ctx.scope, ctx.func, ctx.loops, push_frame(ctx.frames, _GUARDED)) if catches_import_error else ctx
        if guards_xla and catches_import_error and all(
                h.body and _ends_block(h.body[-1]) for h in node.handlers if _catches_import_error(h)):
            self._hard_tries.append(body_ctx.frames)  # except ImportError: sys.exit(...): no fallback
        self._push_block(stack, node.body, body_ctx)
        for handler in node.handlers:
            if guards_xla:
                hctx = Ctx(ctx.scope, ctx.func, ctx.loops, push_frame(ctx.frames, _OFF))
            elif _catches_import_error(handler):
                hctx = Ctx(ctx.scope, ctx.func, ctx.loops, push_frame(ctx.frames, _FALLBACK))
            else:
                hctx = ctx
            stack.append((handler, hctx))
        self._push_block(stack, node.orelse, ctx)
        self._push_block(stack, node.finalbody, ctx)
        return True

    def _on_handler(self, node, ctx, stack):
        if node.name:
            ctx.scope.bind(node.name, node.lineno, "unknown", None, ctx)
        if node.type is not None:
            stack.append((node.type, ctx))
        self._push_block(stack, node.body, ctx)
        return True

    def _on_with(self, node, ctx, stack):
        for item in node.items:
            self.with_items.append((item.context_expr, ctx))
            stack.append((item.context_expr, ctx))
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None, ctx, stack, node.lineno)
        self._push_block(stack, node.body, ctx)
        return True

    def _on_return(self, node, ctx, stack):
        if node.value is not None:
            if ctx.func is not None and ctx.func.node is ctx.scope.node:
                ctx.func.returns.append((node.value, ctx))
            stack.append((node.value, ctx))
        return True

    def _on_yield(self, node, ctx, stack):
        func = ctx.func
        if func is not None:
            scope = ctx.scope
            while scope is not None and scope.kind == "comprehension":
                scope = scope.parent
            if scope is not None and scope.node is func.node:  # (a lambda's yield is the lambda's)
                self.yields.setdefault(id(func), []).append(node)
        return False

    def _on_match(self, node, ctx, stack):
        stack.append((node.subject, ctx))
        for case in reversed(node.cases):
            cctx = ctx
            pattern = case.pattern
            if type(pattern) is ast.MatchValue:  # case "cuda": / case "tpu":
                cctx = Ctx(ctx.scope, ctx.func, ctx.loops, push_frame(ctx.frames, (pattern.value, True)))
                self.case_subjects[id(pattern.value)] = node.subject  # `match step % N: case 0:` (a gate)
            elif not (type(pattern) is ast.MatchAs and pattern.pattern is None):  # not `case _:` / `case x:`
                if type(pattern) is ast.MatchOr:
                    self.case_subjects[id(pattern)] = node.subject
                # "cuda" | "gpu", Cuda(idx=i), torch.device(type="cuda"), ("cuda", rank), ... as b
                cctx = Ctx(ctx.scope, ctx.func, ctx.loops, push_frame(ctx.frames, (pattern, True)))
            stack.append((pattern, cctx))
            if case.guard is not None:
                stack.append((case.guard, cctx))
            self._push_block(stack, case.body, cctx)
        return True

    def _on_global(self, node, ctx, stack):
        if type(node) is ast.Global:
            ctx.scope.globals.update(node.names)
        else:
            ctx.scope.nonlocals.update(node.names)
        return True

    def _on_call(self, node, ctx, stack):
        rec = (node, ctx)
        self.calls.append(rec)
        f = node.func
        if type(f) is ast.Attribute:  # x.name(...): the method-call index (calls.method_calls)
            recs = self.attr_calls.get(f.attr)
            if recs is None:
                self.attr_calls[f.attr] = [rec]
            else:
                recs.append(rec)
        for kw in node.keywords:  # name=...: the keyword index (runtime.keyword_calls)
            recs = self.kw_calls.get(kw.arg)
            if recs is None:
                self.kw_calls[kw.arg] = [rec]
            elif recs[-1] is not rec:  # `f(a=1, a=2)` parses: list the call once
                recs.append(rec)
        args = node.args
        if args and type(args[0]) is ast.Constant and id(node) not in self._bound_dynamic:
            if dynamic_import_name(node) is not None:  # importlib.import_module("torch_xla..."):
                self._dynamic_candidates.append((node, ctx, None))  # settled once names resolve
        if ctx.func is not None:
            ctx.func.calls.append(rec)
        if ctx.loops:  # its innermost loop only (LoopInfo.calls gathers the nested ones)
            ctx.loops[-1].own.append(rec)
        return False

    def _on_attribute(self, node, ctx, stack):
        root = node.value
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is ast.Name:  # only a chain rooted in a name can resolve (not f().x)
            self.attrs.append((node, ctx, root.id))
            if self._star_names:
                self._chain_roots.add(id(root))  # the chain is reported, not its root name
        stack.append((root, ctx))
        return True

    def _on_name_star(self, node, ctx, stack):
        """``_on_name`` in a module with a torch_xla star import: also keep each read of a
        name the star import may bind, so rules can report it where it is used."""
        if type(node.ctx) is ast.Load and node.id in self._star_names and id(node) not in self._chain_roots:
            self.star_uses.append((node, ctx))
        return self._on_name(node, ctx, stack)

    def _on_name(self, node, ctx, stack):
        if type(node.ctx) is ast.Load:
            if ctx.func is not None:
                ctx.func.names.add(node.id)
            if ctx.frames and chain_any(ctx.frames, "typetest", _is_type_test_frame):
                self.guarded_reads[id(node)] = ctx  # (tensors.guarded_not_device)
            sites = self.name_loads.get(node.id)
            if sites is None:
                self.name_loads[node.id] = [ctx]
            elif sites[-1] is not ctx:  # siblings share one Ctx: keep one entry per context
                sites.append(ctx)
        else:
            ctx.scope.bind(node.id, node.lineno, "unknown", None, ctx)
        return True

    def _on_dict(self, node, ctx, stack):
        if None in node.keys:  # {**base, "K": v}: maybe an environment for a child process
            self.unpacking_dicts.append((node, ctx))
        return False

    def _on_subscript(self, node, ctx, stack):
        if type(node.ctx) is ast.Load:
            self.subscript_loads.append((node, ctx))
        return False

    def _on_compare(self, node, ctx, stack):
        self.compares.append((node, ctx))
        return False

    def _on_boolop(self, node, ctx, stack):
        values = node.values
        if len(values) == 2 and type(values[1]) is ast.Call and type(node.op) is ast.Or:
            self.or_calls[id(values[1])] = values[0]
        return False

    def _on_comp(self, node, ctx, stack):
        scope = Scope("comprehension", node, ctx.scope)
        self.scopes.append(scope)
        inner = Ctx(scope, ctx.func, ctx.loops, ctx.frames)
        for i, gen in enumerate(node.generators):
            stack.append((gen.iter, ctx if i == 0 else inner))
            self._bind_target(gen.target, None, inner, stack, node.lineno)
            self._push_exprs(stack, gen.ifs, inner)
        if type(node) is ast.DictComp:
            stack.append((node.key, inner))
            stack.append((node.value, inner))
        else:
            stack.append((node.elt, inner))
        return True

    def _on_match_name(self, node, ctx, stack):
        name = getattr(node, "name", None) or getattr(node, "rest", None)
        if name:
            ctx.scope.bind(name, getattr(node, "lineno", 0), "unknown", None, ctx)
        return False


_EXITS = frozenset({"exit", "quit", "_exit"})


def _ends_block(stmt) -> bool:
    """A statement after which the rest of its block never runs: ``return``, ``raise``,
    ``continue``, ``break``, ``sys.exit()``, ``exit()``, ``quit()``, ``os._exit()``."""
    if isinstance(stmt, TERMINATORS):
        return True
    if type(stmt) is ast.Expr and type(stmt.value) is ast.Call:
        f = stmt.value.func
        if type(f) is ast.Name:
            return f.id in ("exit", "quit")
        if type(f) is ast.Attribute and type(f.value) is ast.Name:
            return f.attr in _EXITS and f.value.id in ("sys", "os")
    return False


def false_constants(tree) -> frozenset[str]:
    """Names the module's own top-level statements bind to a literal ``False`` or ``0``
    (``DEBUG = False``, ``VERBOSE: int = 0``): candidates for flags that are never on."""
    found = set()
    for stmt in getattr(tree, "body", ()):
        t = type(stmt)
        if t is ast.Assign and len(stmt.targets) == 1:
            target = stmt.targets[0]
        elif t is ast.AnnAssign and stmt.value is not None:
            target = stmt.target
        else:
            continue
        value = stmt.value
        if type(target) is ast.Name and type(value) is ast.Constant and type(value.value) in (bool, int) \
                and not value.value:
            found.add(target.id)
    return frozenset(found)


def _is_type_test_frame(frame) -> bool:
    """The test of an ``if`` frame may say what type or device a name has: it calls
    ``isinstance`` / ``type`` / ``torch.is_tensor`` or reads ``.device`` / ``.is_cpu``
    (tensors.guarded_not_device)."""
    if type(frame) is not tuple:
        return False
    for n in ast.walk(frame[0]):
        t = type(n)
        if t is ast.Call and ((type(n.func) is ast.Name and n.func.id in ("isinstance", "type"))
                              or (type(n.func) is ast.Attribute and n.func.attr == "is_tensor")):
            return True
        if t is ast.Attribute and n.attr in ("device", "is_cpu"):
            return True
    return False


def _type_checking_only(frames) -> bool:
    """True inside the body of ``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:``
    (memoised per link of the frame chain)."""
    return chain_any(frames, "tc", _is_type_checking_frame)


def _is_type_checking_frame(frame) -> bool:
    if type(frame) is not tuple or not frame[1]:
        return False
    test = frame[0]
    ident = test.id if type(test) is ast.Name else test.attr if type(test) is ast.Attribute else None
    return ident == "TYPE_CHECKING"


def _selector(test):
    """The structural key of ``x`` in ``x == "tpu"`` / ``x in ("tpu", "xla")`` (a test that
    picks by a string value), else None."""
    if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in (ast.Eq, ast.In):
        right = test.comparators[0]
        if (type(right) is ast.Constant and isinstance(right.value, str)) or (
                type(right) in (ast.Tuple, ast.List, ast.Set)
                and all(type(e) is ast.Constant and isinstance(e.value, str) for e in right.elts)):
            return _expr_key(test.left)
    return None


def _unconditional(ctx, hard: set[int]) -> bool:
    """True when code at ``ctx`` runs whenever its function (or the module) runs: no branch
    frame between it and the function's start except ``try:`` bodies whose ``except
    ImportError`` ends the program (``hard``: ids of those frame links)."""
    base = ctx.func.ctx.frames if ctx.func is not None else None
    node = ctx.frames or None
    while node is not None and node is not base:
        if not (node.frame is _GUARDED and id(node) in hard):
            return False
        node = node.parent
    return True


def dynamic_import_name(call) -> str | None:
    """The module a literal dynamic import names: ``importlib.import_module("m")`` (also
    ``import_module`` imported from importlib) gives ``m``; ``__import__("a.b")`` gives
    ``a`` (``a.b`` with a non-empty ``fromlist``). None for anything else. Syntactic: the
    walk has no bindings yet; names.py checks what ``importlib`` resolves to."""
    if type(call) is not ast.Call or not call.args:
        return None
    arg = call.args[0]
    if type(arg) is not ast.Constant or not isinstance(arg.value, str) or not arg.value:
        return None
    f = call.func
    if (type(f) is ast.Attribute and f.attr == "import_module") or (type(f) is ast.Name and f.id == "import_module"):
        return arg.value if len(call.args) == 1 or type(call.args[1]) is ast.Constant and call.args[1].value is None \
            else None
    if type(f) is ast.Name and f.id == "__import__":
        fromlist = call.args[3] if len(call.args) > 3 else next((k.value for k in call.keywords if k.arg == "fromlist"), None)
        if fromlist is not None and not (type(fromlist) in (ast.List, ast.Tuple) and not fromlist.elts):
            return arg.value
        return arg.value.split(".", 1)[0]
    return None

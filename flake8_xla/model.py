"""The semantic model of one module, built by one iterative walk of its AST.

Rules never walk the tree themselves: they ask this model. The walk records, for every
call, attribute chain, loop, import and assignment, the context it sits in (scope,
enclosing function, enclosing loops, enclosing ``if`` branches); everything else
(qualified names, launched code, step loops, XLA-off branches, values of variables) is
derived from those records on demand and cached.

Nothing here imports or runs the linted code, torch or torch_xla. The walk uses an
explicit stack, never recursion, so any tree ``ast.parse`` accepts can be modelled.
Whatever cannot be seen statically is *unknown* (``None``), and rules never fire on
unknown.
"""

from __future__ import annotations

import ast
import bisect
import re

from .settings import Settings

# Aliases of one API mapped to the canonical dotted name the rules ask for.
CANONICAL = {
    "torch.nn.parallel.distributed.DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel",
    "torch.distributed.distributed_c10d.init_process_group": "torch.distributed.init_process_group",
    "torch.distributed.distributed_c10d.new_group": "torch.distributed.new_group",
    "torch.distributed.distributed_c10d.all_reduce": "torch.distributed.all_reduce",
    "torch.distributed.elastic.utils.distributed.is_torchelastic_launched": "torch.distributed.is_torchelastic_launched",
    "torch.multiprocessing.spawn.spawn": "torch.multiprocessing.spawn",
    "torch.multiprocessing.spawn.start_processes": "torch.multiprocessing.start_processes",
    "torch.utils.data.dataloader.DataLoader": "torch.utils.data.DataLoader",
    "torch_xla.distributed.fsdp.xla_fully_sharded_data_parallel.XlaFullyShardedDataParallel": "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",
    "torch_xla.distributed.parallel_loader.ParallelLoader.per_device_loader": "torch_xla.distributed.parallel_loader.ParallelLoader.per_device_loader",
    "os.environ.__setitem__": "os.environ.__setitem__",
}
_PREFIX_CANONICAL = (
    ("torch_xla.torch_xla.", "torch_xla."),
)

TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _line_of(binding) -> int:
    return binding[0]


_OFF = "off"  # a branch frame that is XLA-off by construction (except ImportError of torch_xla)
_GUARDED = "guarded"  # the body of a try whose handler catches ImportError (a version fallback)
_FALLBACK = "fallback"  # an `except ImportError/AttributeError:` handler: version-adaptive, not XLA-off
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"})

# Fields that never hold a child node worth visiting (strings, ints, operator singletons).
_SKIP_FIELDS = frozenset(
    {"ctx", "op", "id", "arg", "attr", "name", "names", "module", "level", "kind", "conversion",
     "type_comment", "is_async", "n", "s", "asname", "kwd_attrs", "rest", "lineno"}
)
_FIELDS_CACHE: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS_CACHE.get(cls)
    if fields is None:
        if cls is ast.Constant:
            fields = ()
        else:
            fields = tuple(f for f in cls._fields if f not in _SKIP_FIELDS)
        _FIELDS_CACHE[cls] = fields
    return fields


def canonical(qualname: str | None) -> str | None:
    """Map a resolved dotted name onto the canonical spelling of the same API."""
    if qualname is None:
        return None
    found = CANONICAL.get(qualname)
    if found is not None:
        return found
    for prefix, repl in _PREFIX_CANONICAL:
        if qualname.startswith(prefix):
            return repl + qualname[len(prefix):]
    return qualname


class Unknown:
    """Sentinel for a value that cannot be seen statically."""

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "UNKNOWN"


UNKNOWN = Unknown()


class Scope:
    __slots__ = ("kind", "node", "parent", "bindings", "globals", "nonlocals", "cls")

    def __init__(self, kind, node, parent, cls=None):
        self.kind = kind  # "module" | "function" | "lambda" | "class" | "comprehension"
        self.node = node
        self.parent = parent
        self.bindings: dict[str, list[tuple]] = {}
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        self.cls = cls  # ClassInfo for a class scope

    def bind(self, name, line, kind, target, ctx=None):
        if name in self.globals and self.parent is not None:  # `global x` (legal at module level too)
            scope = self
            while scope.parent is not None:
                scope = scope.parent
            scope.bindings.setdefault(name, []).append((line, kind, target, ctx))
            return
        if name in self.nonlocals:
            scope = self.parent
            while scope is not None and scope.kind not in ("function", "lambda"):
                scope = scope.parent
            if scope is not None:
                scope.bind(name, line, kind, target, ctx)
                return
        self.bindings.setdefault(name, []).append((line, kind, target, ctx))


class Ctx:
    """Where a node sits: scope, enclosing function, enclosing loops, ``if`` frames."""

    __slots__ = ("scope", "func", "loops", "frames")

    def __init__(self, scope, func, loops, frames):
        self.scope = scope
        self.func = func  # FunctionInfo or None (module/class level)
        self.loops = loops  # tuple of LoopInfo, innermost last, within the same function
        self.frames = frames  # tuple of (test expr, polarity) or _OFF


class FunctionInfo:
    __slots__ = ("node", "name", "cls", "scope", "ctx", "calls", "names", "params", "returns")

    def __init__(self, node, cls, ctx):
        self.node = node
        self.name = node.name
        self.cls = cls  # ClassInfo when a method
        self.ctx = ctx  # context of the def statement
        self.scope = None
        self.calls: list = []
        self.names: set[str] = set()
        self.returns: list = []  # (value expr, ctx) of each ``return <value>``
        args = node.args
        self.params = [a.arg for a in args.posonlyargs + args.args]


class ClassInfo:
    __slots__ = ("node", "name", "methods", "attrs", "ctx")

    def __init__(self, node, ctx):
        self.node = node
        self.name = node.name
        self.ctx = ctx
        self.methods: dict[str, FunctionInfo] = {}
        self.attrs: dict[str, list] = {}  # self.<attr> -> [(value expr, ctx)]


class LoopInfo:
    __slots__ = ("node", "ctx", "calls")

    def __init__(self, node, ctx):
        self.node = node
        self.ctx = ctx
        self.calls: list = []  # (Call, ctx) anywhere in the body (nested loops included)


class Model:
    """Facts about one module. Build with ``Model(tree, settings)``.

    Args:
        tree: the module's ``ast.Module`` (flake8's tree, never modified).
        settings: the run's :class:`~flake8_xla.settings.Settings`.
    """

    def __init__(self, tree: ast.AST, settings: Settings | None = None):
        self.tree = tree
        self.settings = settings or Settings()
        self.module_scope = Scope("module", tree, None)
        self.calls: list[tuple[ast.Call, Ctx]] = []
        self.attrs: list[tuple[ast.Attribute, Ctx]] = []  # outermost attribute chains
        self.import_froms: list[tuple[ast.ImportFrom, ast.alias, str, Ctx]] = []
        self.imports: list[tuple[ast.AST, ast.alias, str, Ctx]] = []
        self.functions: list[FunctionInfo] = []
        self.classes: list[ClassInfo] = []
        self.loops: list[LoopInfo] = []
        self.subscript_loads: list[tuple[ast.Subscript, Ctx]] = []
        self.subscript_stores: list[tuple[ast.Subscript, ast.AST, Ctx]] = []
        self.compares: list[tuple[ast.Compare, Ctx]] = []
        self.guard_tests: dict[object, bool] = {}  # test key -> True (positive guard)
        # names that can resolve to a dotted name: bound by an import or aliased from a name
        # or attribute chain (`DDP = torch.nn.parallel.DistributedDataParallel`); any other
        # root (self, locals, params) resolves to nothing without a lookup
        self.resolvable: set[str] = set()
        self.resolvable_values: set[str] = set()  # names bound to a plain value somewhere
        self.name_loads: dict[str, list[Ctx]] = {}  # name -> the contexts it is read in
        self.uses_torch_xla = False
        self._cache: dict = {}
        self._walked = False
        self._xla_imports: list = []  # (bound name, ctx) of every torch_xla import
        self._walk()
        self._walked = True
        self.uses_torch_xla = any(
            not any(f is _GUARDED for f in ctx.frames) or bound in self.name_loads
            for bound, ctx in self._xla_imports
        )  # an import inside `try: import torch_xla ... except ImportError:` that nothing reads is a probe

    # ------------------------------------------------------------------ the walk
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
            ast.Name: self._on_name,
            ast.Subscript: self._on_subscript,
            ast.Compare: self._on_compare,
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
                body_ends = bool(stmt.body) and isinstance(stmt.body[-1], TERMINATORS)
                else_ends = bool(stmt.orelse) and isinstance(stmt.orelse[-1], TERMINATORS)
                if body_ends and not stmt.orelse:
                    cur = Ctx(cur.scope, cur.func, cur.loops, cur.frames + ((stmt.test, False),))
                elif else_ends and not body_ends:
                    cur = Ctx(cur.scope, cur.func, cur.loops, cur.frames + ((stmt.test, True),))
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
        self._push_block(stack, node.body, Ctx(scope, ctx.func, ctx.loops, ctx.frames))
        return True

    def _note_import(self, qualname, ctx, bound=None):
        if qualname == "torch_xla" or qualname.startswith("torch_xla."):
            self._xla_imports.append((bound, ctx))
            for frame in reversed(ctx.frames):
                if frame is _GUARDED or frame is _FALLBACK:
                    continue
                if frame is _OFF:
                    break
                test, polarity = frame
                key = _expr_key(test)
                if key is not None and not _is_main_guard(test):
                    self.guard_tests[key] = polarity
                break

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

    def _bind_target(self, target, value, ctx, stack, line):
        """Bind an assignment target; ``value`` is the assigned expr or None (unknown)."""
        t = type(target)
        if t is ast.Name:
            if value is None:
                ctx.scope.bind(target.id, line, "unknown", None, ctx)
            else:
                ctx.scope.bind(target.id, line, "value", value, ctx)
                self.resolvable_values.add(target.id)
                if type(value) in (ast.Name, ast.Attribute):
                    self.resolvable.add(target.id)
        elif t in (ast.Tuple, ast.List):
            elts = target.elts
            vals = value.elts if type(value) in (ast.Tuple, ast.List) else None
            if vals is not None and (len(vals) != len(elts) or any(type(e) is ast.Starred for e in elts)):
                vals = None
            for i, elt in enumerate(elts):
                self._bind_target(elt, vals[i] if vals is not None else None, ctx, stack, line)
        elif t is ast.Starred:
            self._bind_target(target.value, None, ctx, stack, line)
        elif t is ast.Attribute:
            base = target.value
            if type(base) is ast.Name and ctx.func is not None and ctx.func.cls is not None \
                    and ctx.func.params and base.id == ctx.func.params[0]:
                ctx.func.cls.attrs.setdefault(target.attr, []).append((value, ctx))
            stack.append((target, ctx))
        elif t is ast.Subscript:
            if value is not None:
                self.subscript_stores.append((target, value, ctx))
            stack.append((target, ctx))
        else:
            stack.append((target, ctx))

    def _on_assign(self, node, ctx, stack):
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
        loop = LoopInfo(node, ctx)
        self.loops.append(loop)
        stack.append((node.iter, ctx))
        self._bind_target(node.target, None, ctx, stack, node.lineno)
        self._push_block(stack, node.body, Ctx(ctx.scope, ctx.func, ctx.loops + (loop,), ctx.frames))
        self._push_block(stack, node.orelse, ctx)
        return True

    def _on_while(self, node, ctx, stack):
        loop = LoopInfo(node, ctx)
        self.loops.append(loop)
        inner = Ctx(ctx.scope, ctx.func, ctx.loops + (loop,), ctx.frames)
        stack.append((node.test, inner))
        self._push_block(stack, node.body, inner)
        self._push_block(stack, node.orelse, ctx)
        return True

    def _on_if(self, node, ctx, stack):
        stack.append((node.test, ctx))
        self._push_block(stack, node.body, Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + ((node.test, True),)))
        self._push_block(stack, node.orelse, Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + ((node.test, False),)))
        return True

    def _on_ifexp(self, node, ctx, stack):
        stack.append((node.test, ctx))
        stack.append((node.body, Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + ((node.test, True),))))
        stack.append((node.orelse, Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + ((node.test, False),))))
        return True

    def _on_try(self, node, ctx, stack):
        guards_xla = any(
            (type(s) is ast.Import and any(a.name.split(".")[0] == "torch_xla" for a in s.names))
            or (type(s) is ast.ImportFrom and not s.level and (s.module or "").split(".")[0] == "torch_xla")
            for s in node.body
        )
        catches_import_error = any(_catches_import_error(h) for h in node.handlers)
        body_ctx = Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + (_GUARDED,)) if catches_import_error else ctx
        self._push_block(stack, node.body, body_ctx)
        for handler in node.handlers:
            if guards_xla:
                hctx = Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + (_OFF,))
            elif _catches_import_error(handler):
                hctx = Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + (_FALLBACK,))
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

    def _on_match(self, node, ctx, stack):
        stack.append((node.subject, ctx))
        for case in reversed(node.cases):
            cctx = ctx
            pattern = case.pattern
            if type(pattern) is ast.MatchValue:  # case "cuda": / case "tpu":
                cctx = Ctx(ctx.scope, ctx.func, ctx.loops, ctx.frames + ((pattern.value, True),))
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
        if ctx.func is not None:
            ctx.func.calls.append(rec)
        for loop in ctx.loops:
            loop.calls.append(rec)
        return False

    def _on_attribute(self, node, ctx, stack):
        self.attrs.append((node, ctx))
        root = node.value
        while type(root) is ast.Attribute:
            root = root.value
        stack.append((root, ctx))
        return True

    def _on_name(self, node, ctx, stack):
        if type(node.ctx) is ast.Load:
            if ctx.func is not None:
                ctx.func.names.add(node.id)
            sites = self.name_loads.get(node.id)
            if sites is None:
                self.name_loads[node.id] = [ctx]
            elif sites[-1] is not ctx:  # siblings share one Ctx: keep one entry per context
                sites.append(ctx)
        else:
            ctx.scope.bind(node.id, node.lineno, "unknown", None, ctx)
        return True

    def _on_subscript(self, node, ctx, stack):
        if type(node.ctx) is ast.Load:
            self.subscript_loads.append((node, ctx))
        return False

    def _on_compare(self, node, ctx, stack):
        self.compares.append((node, ctx))
        return False

    def _on_comp(self, node, ctx, stack):
        scope = Scope("comprehension", node, ctx.scope)
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

    # ------------------------------------------------------------------ names
    def lookup(self, name: str, ctx: Ctx, line: int | None = None):
        """The bindings of ``name`` visible from ``ctx`` (Python's LEGB, class scopes skipped).

        Returns a list of ``(line, kind, target, ctx)`` bindings in the scope that owns the
        name: in the use's own scope only the latest binding at or before ``line``; in an
        enclosing scope every binding. ``None`` when the name is bound nowhere (a builtin).
        """
        scope = ctx.scope
        first = True
        while scope is not None:
            if not first and scope.kind == "class":
                scope = scope.parent
                continue
            if name in scope.globals:
                while scope.parent is not None:
                    scope = scope.parent
            bindings = scope.bindings.get(name)
            if bindings:
                if len(bindings) == 1:
                    return bindings
                bindings = self._ordered_bindings(scope, name, bindings)
                # in the use's own scope, the latest binding at or before the use
                if first and line is not None and (scope.kind != "module" or ctx.func is None):
                    i = bisect.bisect_right(bindings, line, key=_line_of)
                    if i:
                        return [bindings[i - 1]]
                return bindings
            first = False
            scope = scope.parent
        return None

    def _ordered_bindings(self, scope, name, bindings):
        """A name's bindings in source order, minus those made only where XLA is off (the
        ``else`` of ``if USE_TPU:``, ``except ImportError:`` of the torch_xla import: such a
        value never holds in XLA code); cached once the walk is done."""
        if not self._walked:
            return sorted(bindings, key=_line_of)
        key = ("ob", id(scope), name)
        cached = self._cache.get(key)
        if cached is None:
            on = [b for b in bindings if b[3] is None or not self.is_xla_off(b[3])]
            cached = self._cache[key] = sorted(on or bindings, key=_line_of)
        return cached

    def qualname(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> str | None:
        """Canonical dotted name of a name or attribute chain rooted in an import.

        ``xm.optimizer_step`` -> ``torch_xla.core.xla_model.optimizer_step`` for every import
        spelling; ``None`` when the root is not an import (a local, a call result, a param).
        """
        parts = []
        node = expr
        while type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        if type(node) is not ast.Name or _depth > 8 or node.id not in self.resolvable:
            return None
        base = self._resolve_name(node.id, ctx, getattr(node, "lineno", None), _depth)
        if base is None:
            return None
        if parts:
            base = base + "." + ".".join(reversed(parts))
        return canonical(base)

    def _resolve_name(self, name, ctx, line, depth):
        bindings = self.lookup(name, ctx, line)
        if not bindings:
            return None
        if len(bindings) > 1:
            # `except ImportError: xm = None` next to the import: the fallback is not a rebinding
            kept = [b for b in bindings if not (b[1] == "value" and type(b[2]) is ast.Constant and b[2].value is None)]
            bindings = kept or bindings
        result = None
        for b_line, kind, target, b_ctx in bindings:
            if kind == "import":
                q = target
            elif kind == "value" and type(target) in (ast.Name, ast.Attribute):
                q = self.qualname(target, b_ctx, depth + 1)
            else:
                return None
            if q is None or (result is not None and q != result):
                return None
            result = q
        return result

    def call_name(self, call: ast.Call, ctx: Ctx) -> str | None:
        """Qualified name of what a call calls (cached per call node)."""
        key = ("cn", id(call))
        cache = self._cache
        if key not in cache:
            cache[key] = self.qualname(call.func, ctx)
        return cache[key]

    def calls_to(self, *qualnames: str) -> list[tuple[ast.Call, Ctx]]:
        """Every call (with its context) whose callee resolves to one of ``qualnames``."""
        index = self._cache.get("calls_index")
        if index is None:
            index = {}
            for call, ctx in self.calls:
                q = self.call_name(call, ctx)
                if q is not None:
                    index.setdefault(q, []).append((call, ctx))
            self._cache["calls_index"] = index
        out = []
        for q in qualnames:
            out.extend(index.get(q, ()))
        out.sort(key=lambda rec: (rec[0].lineno, rec[0].col_offset))
        return out

    def calls_with_prefix(self, prefix: str) -> list[tuple[ast.Call, Ctx]]:
        self.calls_to()  # build the index
        index = self._cache["calls_index"]
        return [rec for q, recs in index.items() if q.startswith(prefix) for rec in recs]

    def references(self, prefix: str) -> list[tuple[ast.AST, str, Ctx]]:
        """Attribute chains and from-imports whose name resolves under ``prefix``.

        Returns ``(node, qualname, ctx)``: the outermost attribute chain for ``xm.x`` and
        ``torch_xla.core.xla_model.x``; the ``alias`` of ``from torch_xla... import x``.
        A bare name bound by such a from-import is reported at the import, not at each use.
        """
        key = ("refs", prefix)
        if key in self._cache:
            return self._cache[key]
        index = self._cache.get("attr_index")
        if index is None:  # qualname -> chains, built once: the attribute chains are many
            index = {}
            for node, ctx in self.attrs:
                q = self._attr_qualname(node, ctx)
                if q is not None:
                    index.setdefault(q, []).append((node, ctx))
            self._cache["attr_index"] = index
        out = []
        for q, chains in index.items():
            if q == prefix or q.startswith(prefix + ".") or prefix.endswith(".") and q.startswith(prefix):
                out.extend((node, q, ctx) for node, ctx in chains)
        for node, alias, full, ctx in self.import_froms:
            q = canonical(full)
            if q == prefix or q.startswith(prefix + ".") or prefix.endswith(".") and q.startswith(prefix):
                out.append((alias if hasattr(alias, "lineno") else node, q, ctx))
        out.sort(key=lambda r: (r[0].lineno, r[0].col_offset))
        self._cache[key] = out
        return out

    def import_refs(self, prefix: str) -> list[tuple[ast.alias, str, Ctx]]:
        """``import a.b.c [as x]`` statements (their alias) naming a module under ``prefix``."""
        out = []
        for node, alias, full, ctx in self.imports:
            if full == prefix or full.startswith(prefix + "."):
                out.append((alias if hasattr(alias, "lineno") else node, full, ctx))
        return out

    def root_import(self, expr: ast.AST, ctx: Ctx) -> str | None:
        """The dotted name imported into the root name of an attribute chain, if an import binds it."""
        node = expr
        while type(node) is ast.Attribute:
            node = node.value
        if type(node) is not ast.Name:
            return None
        bindings = self.lookup(node.id, ctx, getattr(node, "lineno", None))
        if bindings and all(kind == "import" for _, kind, _, _ in bindings) and len({b[2] for b in bindings}) == 1:
            return bindings[0][2]
        return None

    def _attr_qualname(self, node, ctx):
        key = ("aq", id(node))
        cache = self._cache
        if key not in cache:
            cache[key] = self.qualname(node, ctx)
        return cache[key]

    # ------------------------------------------------------------------ values
    def const(self, expr: ast.AST | None, ctx: Ctx, _depth: int = 0):
        """The literal value of ``expr``, following simple constant assignments; else UNKNOWN."""
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

    def values(self, expr: ast.AST, ctx: Ctx) -> list[tuple[ast.AST, Ctx]] | None:
        """The expressions a name or ``self.attr`` may hold at ``expr``; None when unknown.

        Plain assignments and tuple unpacking are followed; a parameter, a loop target or
        anything else that cannot be seen makes the answer unknown.
        """
        t = type(expr)
        if t is ast.Name:
            bindings = self.lookup(expr.id, ctx, getattr(expr, "lineno", None))
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
                assigned = func.cls.attrs.get(expr.attr)
                if assigned and all(v is not None for v, _ in assigned):
                    return list(assigned)
        return None

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

    # ------------------------------------------------------------------ XLA-off branches
    def in_xla_code(self, ctx: Ctx) -> bool:
        """True when code at ``ctx`` runs as XLA code (module scope and not an XLA-off branch)."""
        if not (self.uses_torch_xla or self.settings.scope == "always"):
            return False
        return not self.is_xla_off(ctx)

    def is_xla_off(self, ctx: Ctx, _depth: int = 0) -> bool:
        """True in a branch XLA never takes, or in a function that only such branches call
        (callers are followed 16 levels up; deeper is taken as reachable with XLA on)."""
        if self._frames_off(ctx):
            return True
        func = ctx.func
        while func is not None and _depth < 16:
            if self.func_off(func, _depth + 1):
                return True
            func = func.ctx.func
        return False

    def func_off(self, func: FunctionInfo, _depth: int = 0) -> bool:
        """True when every place in the module that calls or names ``func`` is XLA-off
        (``setup_gpu`` called only from the ``else`` of ``if args.tpu:``); a function that
        nothing in the module refers to (an entry point) is not."""
        key = ("foff", id(func))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = False  # recursion through a cycle of callers: not off
        sites = [c for c in self.name_loads.get(func.name, ()) if self._names_def(func, c)]
        if func.cls is not None:
            by_attr = self._cache.get("attr_calls")
            if by_attr is None:  # method calls by name, indexed once
                by_attr = self._cache["attr_calls"] = {}
                for call, c in self.calls:
                    if type(call.func) is ast.Attribute:
                        by_attr.setdefault(call.func.attr, []).append((call, c))
            sites += [c for call, c in by_attr.get(func.name, ()) if func in self.function_of(call.func, c)]
        result = bool(sites) and all(self.is_xla_off(c, _depth) for c in sites)
        if _depth < 16 or result:  # a verdict cut short by the depth bound is not cached
            cache[key] = result
        else:
            del cache[key]
        return result

    def _names_def(self, func, ctx) -> bool:
        bindings = self.lookup(func.name, ctx, None)
        return bool(bindings) and any(kind == "def" and target is func for _, kind, target, _ in bindings)

    def _frames_off(self, ctx: Ctx) -> bool:
        for frame in ctx.frames:
            if frame is _OFF:
                return True
            if frame is _GUARDED or frame is _FALLBACK:
                continue
            test, polarity = frame
            off_true, off_false = self._classify(test)
            if (polarity and off_true) or (not polarity and off_false):
                return True
        return False

    def _classify(self, test):
        """(off when true, off when false) for an ``if`` test."""
        key = ("cls", id(test))
        cache = self._cache
        if key in cache:
            return cache[key]
        cache[key] = (False, False)  # a test whose names depend on itself is unrelated
        result = self._classify_uncached(test)
        cache[key] = result
        return result

    def _classify_uncached(self, test):
        key = _expr_key(test)
        if key is not None and key in self.guard_tests:  # `if in_colab and on_tpu:` guarding the import
            return (False, True) if self.guard_tests[key] else (True, False)
        # iterative over not/and/or by an explicit post-order evaluation
        order = []
        stack = [test]
        while stack:
            node = stack.pop()
            order.append(node)
            if type(node) is ast.UnaryOp and type(node.op) is ast.Not:
                stack.append(node.operand)
            elif type(node) is ast.BoolOp:
                stack.extend(node.values)
        results = {}
        for node in reversed(order):
            if type(node) is ast.UnaryOp and type(node.op) is ast.Not:
                t, f = results[id(node.operand)]
                results[id(node)] = (f, t)
            elif type(node) is ast.BoolOp:
                vals = [results[id(v)] for v in node.values]
                if type(node.op) is ast.And:
                    results[id(node)] = (any(v[0] for v in vals), all(v[1] for v in vals))
                else:
                    results[id(node)] = (all(v[0] for v in vals), any(v[1] for v in vals))
            else:
                results[id(node)] = self._classify_atom(node)
        return results[id(test)]

    def _classify_atom(self, node):
        key = _expr_key(node)
        if key is not None and key in self.guard_tests:
            positive = self.guard_tests[key]
            return (False, True) if positive else (True, False)
        sign = self._atom_sign(node)
        if sign > 0:
            return (False, True)
        if sign < 0:
            return (True, False)
        return (False, False)

    def _atom_sign(self, node):
        """+1: true means XLA is on; -1: true means XLA is off (a CUDA test); 0: unrelated."""
        t = type(node)
        if t is ast.Constant and isinstance(node.value, str):  # a `case "cuda":` pattern
            low = node.value.lower()
            return 1 if low.startswith(("xla", "tpu")) else -1 if low.startswith(("cuda", "gpu")) else 0
        if t is ast.Compare and len(node.ops) == 1 and not any(
                type(c) is ast.Constant and isinstance(c.value, str) for c in (node.left, node.comparators[0])) \
                and not (type(node.comparators[0]) is ast.Constant and node.comparators[0].value is None):
            # n_gpu > 0, torch.cuda.device_count() == 0, state.type == DistributedType.XLA
            left, op, right = node.left, node.ops[0], node.comparators[0]
            sign = self._atom_sign(left) or (self._atom_sign(right) if type(right) is not ast.Constant else 0)
            zero = type(right) is ast.Constant and right.value == 0 and not isinstance(right.value, bool)
            if (zero and type(op) in (ast.Eq, ast.LtE)) or type(op) in (ast.NotEq, ast.IsNot, ast.NotIn):
                sign = -sign
            return sign
        if t is ast.Compare and len(node.ops) == 1:
            left, op, right = node.left, node.ops[0], node.comparators[0]
            if type(right) is ast.Constant and right.value is None and type(op) in (ast.Is, ast.IsNot):
                q = self.qualname(left, Ctx(self.module_scope, None, (), ()))
                if q is not None and q.startswith("torch_xla"):
                    return 1 if type(op) is ast.IsNot else -1
                return 0
            strings = [c.value.lower() for c in (left, right) if type(c) is ast.Constant and isinstance(c.value, str)]
            if type(right) in (ast.Tuple, ast.List, ast.Set):
                strings += [c.value.lower() for c in right.elts if type(c) is ast.Constant and isinstance(c.value, str)]
            sign = 0
            for s in strings:
                if s.startswith(("xla", "tpu")):
                    sign = 1
                elif s.startswith(("cuda", "gpu", "nccl")):
                    sign = -1
            if type(op) in (ast.NotEq, ast.NotIn, ast.IsNot):
                sign = -sign
            return sign
        if t is ast.Call:
            if type(node.func) is ast.Attribute and node.func.attr in ("startswith", "endswith") and node.args \
                    and type(node.args[0]) is ast.Constant and isinstance(node.args[0].value, str):
                return self._atom_sign(node.args[0])  # device.startswith("cuda")
            node = node.func
            t = type(node)
        if t is ast.Name:
            ident = node.id
        elif t is ast.Attribute:
            ident = node.attr
            if ident in ("is_available", "device_count"):
                q = self.qualname(node, Ctx(self.module_scope, None, (), ()))
                if q is not None and q.startswith("torch.cuda."):
                    return -1
                base = node.value
                ident = base.attr if type(base) is ast.Attribute else getattr(base, "id", "")
        else:
            return 0
        low = ident.lower()
        if "xla" in low or "tpu" in low:
            return 1
        if re.search(r"(^|_)(cuda|gpu|gpus|nccl)($|_)", low):
            return -1
        return 0

    _VERSION_NAME = re.compile(r"(?i)(version|(^|_)(pt|torch|xla|torch_xla)(_[a-z]+)*_?v?\d)")

    def version_adaptive(self, ctx: Ctx, probe: bool = False) -> bool:
        """True where code picks the torch_xla API that exists at run time: either branch (or
        after the early return) of ``hasattr(<torch_xla module>, "name")``, of a test on
        ``__version__`` or a name like ``is_pt20`` / ``_XLA_GREATER_EQUAL_2_1``, and the
        ``except ImportError:`` fallback of a torch_xla import. With ``probe``, also the body
        of such a ``try`` (importing a name newer than the target there is a forward probe;
        a deprecated or removed one still is the code's main path)."""
        for frame in ctx.frames:
            if frame is _OFF or frame is _FALLBACK or (probe and frame is _GUARDED):
                return True
            if frame is _GUARDED:
                continue
            key = ("va", id(frame[0]))
            if key not in self._cache:
                self._cache[key] = self._is_version_test(frame[0], ctx)
            if self._cache[key]:
                return True
        return False

    def _is_version_test(self, test, ctx, _depth: int = 0) -> bool:
        for i, node in enumerate(ast.walk(test)):
            if i > 64 or _depth > 4:
                return False
            if type(node) is ast.Name and node.id in self.resolvable_values:
                # HAS_SYNC = hasattr(torch_xla, "sync"); NEW_XLA = version.parse(...) >= ...
                values = self.values(node, ctx)
                if values and any(self._is_version_test(v, c, _depth + 1) for v, c in values if c is not None):
                    return True
            if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in ("hasattr", "getattr") \
                    and node.args:
                q = self.qualname(node.args[0], ctx)
                if q is not None and (q == "torch_xla" or q.startswith("torch_xla.")):
                    return True
            ident = node.attr if type(node) is ast.Attribute else node.id if type(node) is ast.Name else None
            if ident and self._VERSION_NAME.search(ident):
                return True
        return False

    # ------------------------------------------------------------------ functions and launches
    def function_of(self, expr: ast.AST, ctx: Ctx, _depth: int = 0) -> list[FunctionInfo]:
        """Module functions an expression names: ``f``, ``partial(f, ...)``, ``self.m``,
        ``Cls.m``, ``obj.m`` for ``obj = Cls(...)``, and what a ``lambda`` calls."""
        key = ("fo", id(expr))
        cache = self._cache
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
        if t is ast.Call and expr.args:
            q = self.qualname(expr.func, ctx)
            if q == "functools.partial":
                return self.function_of(expr.args[0], ctx, _depth + 1)
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
        if t is ast.Attribute:
            base = expr.value
            cls = None
            if type(base) is ast.Name:
                func = ctx.func
                if func is not None and func.cls is not None and func.params and base.id == func.params[0]:
                    cls = func.cls
                else:
                    cls = self.class_named(base.id, ctx)
                    if cls is None:  # obj = Cls(...); obj.method
                        values = self.values(base, ctx)
                        if values and len(values) == 1 and type(values[0][0]) is ast.Call \
                                and type(values[0][0].func) is ast.Name:
                            cls = self.class_named(values[0][0].func.id, values[0][1])
            if cls is not None:
                return [m for m in self._mro_methods(cls, expr.attr)]
        return []

    def class_named(self, name: str, ctx: Ctx) -> ClassInfo | None:
        bindings = self.lookup(name, ctx, None)
        if bindings and len(bindings) == 1 and bindings[0][1] == "class":
            return bindings[0][2]
        return None

    def mro(self, cls: ClassInfo) -> list[ClassInfo]:
        """``cls`` and its base classes defined in the module, nearest first (cycle-safe)."""
        key = ("mro", id(cls))
        if key in self._cache:
            return self._cache[key]
        out, seen, i = [cls], {id(cls)}, 0
        while i < len(out):  # breadth first; each class once (diamonds would otherwise explode)
            c = out[i]
            i += 1
            for base in c.node.bases:
                if type(base) is ast.Name:
                    b = self.class_named(base.id, c.ctx)
                    if b is not None and id(b) not in seen:
                        seen.add(id(b))
                        out.append(b)
        self._cache[key] = out
        return out

    def _mro_methods(self, cls: ClassInfo, name: str) -> list[FunctionInfo]:
        for c in self.mro(cls):
            if name in c.methods:
                return [c.methods[name]]
        return []

    def _class_methods(self, cls: ClassInfo) -> list[FunctionInfo]:
        """The methods an instance of ``cls`` has: a subclass's override hides the base's."""
        found: dict[str, FunctionInfo] = {}
        for c in self.mro(cls):
            for name, method in c.methods.items():
                found.setdefault(name, method)
        return list(found.values())

    def callees(self, func: FunctionInfo) -> list[FunctionInfo]:
        """Module functions ``func`` calls or refers to (methods of classes it instantiates too)."""
        key = ("callees", id(func))
        if key in self._cache:
            return self._cache[key]
        out = []
        inner_ctx = Ctx(func.scope, func, (), ())
        for name in func.names:
            sites = [c for c in self.name_loads.get(name, ()) if c.func is func]
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
            if type(call.func) is ast.Attribute and not self._frames_off(ctx):
                out.extend(self.function_of(call.func, ctx))
        # nested defs run when their parent runs (closures, local helpers)
        for f in self.functions:
            if f.ctx.func is func:
                out.append(f)
        self._cache[key] = out
        return out

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
        ``start_processes`` only in XLA code. Targets are the module functions named by the
        first argument or ``fn=``; an empty list means the target cannot be seen.
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
        self._cache["launches"] = out
        return out

    def launched(self, multi_only: bool = False) -> set[int]:
        """ids of functions run by a launcher (targets and what they call in the module)."""
        key = ("launched", multi_only)
        if key not in self._cache:
            roots = [t for _, _, targets, single in self.launches() if not (multi_only and single) for t in targets]
            self._cache[key] = self.reachable(roots)
        return self._cache[key]

    def is_launched(self, ctx: Ctx, multi_only: bool = False) -> bool:
        func = ctx.func
        return func is not None and id(func) in self.launched(multi_only)

    def launch_targets(self) -> list[FunctionInfo]:
        return [t for _, _, targets, _ in self.launches() for t in targets]

    # ------------------------------------------------------------------ module facts
    def torchrun_hints(self) -> bool:
        """True when the module looks launched by torchrun (elastic), not by the XLA launcher."""
        if "torchrun" in self._cache:
            return self._cache["torchrun"]
        hint = bool(self.calls_to("torch.distributed.is_torchelastic_launched",
                                  "torch.distributed.elastic.utils.distributed.is_torchelastic_launched"))
        if not hint:
            hint = any(n == "torch.distributed.run" or n.startswith("torch.distributed.elastic")
                       for _, _, n, _ in self.imports + self.import_froms)
        if not hint:
            launched = self.launched()
            for key, node, ctx in self.env_reads() + self.env_tests():
                if key in ("LOCAL_RANK", "RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID") \
                        and not (ctx.func is not None and id(ctx.func) in launched):
                    hint = True
                    break
        self._cache["torchrun"] = hint
        return hint

    def env_reads(self) -> list[tuple[str, ast.AST, Ctx]]:
        """Reads of environment variables: ``os.environ[k]``, ``.get(k)``, ``os.getenv(k)``, ``k in os.environ``."""
        if "env_reads" in self._cache:
            return self._cache["env_reads"]
        out = []
        for node, ctx in self.subscript_loads:
            if self.qualname(node.value, ctx) == "os.environ":
                key = self.const(node.slice, ctx)
                if isinstance(key, str):
                    out.append((key, node, ctx))
        for call, ctx in self.calls_to("os.environ.get", "os.getenv", "os.environ.__getitem__"):
            key = self.const(call.args[0], ctx) if call.args else UNKNOWN
            if isinstance(key, str):
                out.append((key, call, ctx))
        self._cache["env_reads"] = out
        return out

    def env_tests(self) -> list[tuple[str, ast.Compare, Ctx]]:
        """Membership tests ``"K" in os.environ`` (they read no value)."""
        out = []
        for node, ctx in self.compares:
            if len(node.ops) == 1 and type(node.ops[0]) in (ast.In, ast.NotIn) \
                    and self.qualname(node.comparators[0], ctx) == "os.environ":
                key = self.const(node.left, ctx)
                if isinstance(key, str):
                    out.append((key, node, ctx))
        return out

    def env_writes(self) -> list[tuple[str, ast.AST, ast.AST | None, Ctx]]:
        """Writes of environment variables in every spelling: ``(key, node, value, ctx)``.

        ``os.environ[k] = v``, ``os.environ.setdefault(k, v)``, ``os.environ.update({k: v})``
        and ``update(k=v)``, ``os.putenv(k, v)``.
        """
        if "env_writes" in self._cache:
            return self._cache["env_writes"]
        out = []
        for target, value, ctx in self.subscript_stores:
            if self.qualname(target.value, ctx) == "os.environ":
                key = self.const(target.slice, ctx)
                if isinstance(key, str):
                    out.append((key, target, value, ctx))
        for call, ctx in self.calls_to("os.environ.setdefault", "os.putenv", "os.environ.__setitem__"):
            if call.args:
                key = self.const(call.args[0], ctx)
                if isinstance(key, str):
                    out.append((key, call, call.args[1] if len(call.args) > 1 else None, ctx))
        for call, ctx in self.calls_to("os.environ.update"):
            for arg in call.args:
                if type(arg) is ast.Dict:
                    for k, v in zip(arg.keys, arg.values):
                        key = self.const(k, ctx) if k is not None else UNKNOWN
                        if isinstance(key, str):
                            out.append((key, k, v, ctx))
            for kw in call.keywords:
                if kw.arg is not None:
                    out.append((kw.arg, kw, kw.value, ctx))
        out.sort(key=lambda r: (r[1].lineno, r[1].col_offset))
        self._cache["env_writes"] = out
        return out

    # ------------------------------------------------------------------ step loops
    _OPT_NAME = re.compile(r"^(?:.*_)?(?:opt|optim|optimizer|optimiser|optimizers)(?:_\w+|\d+)?$", re.I)

    def is_optimizer(self, expr: ast.AST, ctx: Ctx) -> bool:
        """True when ``expr`` holds a torch optimizer (constructed from ``torch.optim`` or so named)."""
        values = self.resolve_values(expr, ctx)
        if values:
            kinds = set()
            for v, c in values:
                q = self.call_name(v, c) if type(v) is ast.Call else None
                if q is None:
                    kinds.add("unknown")
                elif q.startswith("torch.optim.lr_scheduler") or "scheduler" in q.lower():
                    kinds.add("scheduler")
                elif q.startswith(("torch.optim.", "torch_xla.amp.syncfree.", "torch.distributed.optim.",
                                   "torch_xla.distributed.zero_redundancy_optimizer.")):
                    kinds.add("optimizer")
                else:
                    kinds.add("unknown")
            if kinds == {"optimizer"}:
                return True
            if "scheduler" in kinds:
                return False
        t = type(expr)
        ident = expr.id if t is ast.Name else expr.attr if t is ast.Attribute else None
        return bool(ident) and "sched" not in ident.lower() and bool(self._OPT_NAME.match(ident))

    def is_backward(self, call: ast.Call, ctx: Ctx) -> bool:
        f = call.func
        if type(f) is ast.Attribute and f.attr == "backward":
            return True
        return self.call_name(call, ctx) == "torch.autograd.backward"

    def is_optimizer_step(self, call: ast.Call, ctx: Ctx) -> bool:
        """``optimizer.step()`` on a torch optimizer (not ``xm.optimizer_step``)."""
        f = call.func
        return type(f) is ast.Attribute and f.attr == "step" and self.is_optimizer(f.value, ctx)

    def _is_step_marker(self, call, ctx):
        return (self.is_backward(call, ctx) or self.is_optimizer_step(call, ctx)
                or self.call_name(call, ctx) in ("torch_xla.core.xla_model.optimizer_step",
                                                 "torch_xla.core.xla_model.reduce_gradients"))

    def does_step(self, func: FunctionInfo) -> bool:
        """True when ``func`` (or a module function it calls) runs backward or an optimizer step."""
        table = self._cache.get("does_step")
        if table is None:
            direct = {id(f): any(self._is_step_marker(c, x) for c, x in f.calls) for f in self.functions}
            # propagate to callers until nothing changes (bounded by the number of functions)
            changed = True
            rounds = 0
            while changed and rounds <= len(self.functions):
                changed = False
                rounds += 1
                for f in self.functions:
                    if not direct[id(f)] and any(direct.get(id(g)) for g in self._direct_callees(f)):
                        direct[id(f)] = True
                        changed = True
            table = self._cache["does_step"] = direct
        return table.get(id(func), False)

    def _direct_callees(self, func: FunctionInfo) -> list[FunctionInfo]:
        key = ("dcallees", id(func))
        if key not in self._cache:
            out = []
            for call, ctx in func.calls:
                out.extend(self.function_of(call.func, ctx))
            self._cache[key] = out
        return self._cache[key]

    def is_step_loop(self, loop: LoopInfo) -> bool:
        """A loop whose body (or a module function it calls) runs backward or an optimizer step."""
        key = ("steploop", id(loop))
        if key not in self._cache:
            result = False
            for call, ctx in loop.calls:
                if self._is_step_marker(call, ctx) or any(self.does_step(f) for f in self.function_of(call.func, ctx)):
                    result = True
                    break
            self._cache[key] = result
        return self._cache[key]

    def loop_of(self, node: ast.AST) -> LoopInfo | None:
        for loop in self.loops:
            if loop.node is node:
                return loop
        return None

    SYNCS = ("torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch_xla.step",
             "torch_xla._XLAC._xla_step_marker", "torch_xla.debug.profiler.StepTrace")

    def loop_syncs(self, loop: LoopInfo) -> bool:
        """True when the loop body cuts the graph each iteration (sync, mark_step, barrier=True, step())."""
        for call, ctx in loop.calls:
            q = self.call_name(call, ctx)
            if q in self.SYNCS:
                return True
            if q == "torch_xla.core.xla_model.optimizer_step":
                if self.const(self.kwarg(call, "barrier", 1), ctx) is True:
                    return True
            for f in self.function_of(call.func, ctx):
                if any(self.call_name(c, x) in self.SYNCS for c, x in f.calls):
                    return True
                if any(self.qualname(d.func if type(d) is ast.Call else d, f.ctx) in self.COMPILERS
                       for d in f.node.decorator_list):
                    return True  # @torch_xla.compile syncs before and after the step
            if q is None and type(call.func) in (ast.Name, ast.Attribute):
                values = self.values(call.func, ctx)  # step = torch_xla.compile(step_fn)
                if values and all(type(v) is ast.Call and self.call_name(v, c) in self.COMPILERS for v, c in values):
                    return True
        return False

    COMPILERS = ("torch_xla.compile",)

    REDUCING_WRAPPERS = (
        "torch.nn.parallel.DistributedDataParallel",
        "torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",
        "torch_xla.distributed.spmd.SpmdFullyShardedDataParallel",
        "torch_xla.experimental.spmd_fully_sharded_data_parallel",
        "torch_xla.distributed.zero_redundancy_optimizer.ZeroRedundancyOptimizer",
        "torch_xla.distributed.spmd",
        "torch_xla.experimental.xla_sharding",
        "torch_xla.runtime.use_spmd",
        "torch.distributed.fsdp",
        "torch.distributed._composable.fsdp",
        "torch.distributed.optim.ZeroRedundancyOptimizer",
        "torch.distributed.algorithms",
    )
    _FRAMEWORKS = ("accelerate", "lightning", "pytorch_lightning", "transformers.Trainer",
                   "transformers.trainer", "ignite", "composer")

    def reduces_gradients_elsewhere(self) -> bool:
        """True when the module uses something that reduces gradients itself.

        DDP, XLA FSDP, FSDPv2 / SPMD (``xr.use_spmd``, ``torch_xla.distributed.spmd``),
        ZeRO-1, torch FSDP, a training framework (Accelerate, Lightning, HF Trainer), or
        ``XLA_USE_SPMD`` in the environment.
        """
        if "reduces" not in self._cache:
            self._cache["reduces"] = self.uses_spmd() or any(
                q.startswith(self.REDUCING_WRAPPERS) or q.startswith(self._FRAMEWORKS) for q in self.used_names())
        return self._cache["reduces"]

    def used_names(self) -> list[str]:
        """Every dotted name the module imports or reaches through torch / torch_xla chains."""
        if "used_names" not in self._cache:
            names = [q for _, q, _ in self.references("torch")] + [q for _, q, _ in self.references("torch_xla")]
            names += [full for _, _, full, _ in self.imports + self.import_froms]
            self._cache["used_names"] = names
        return self._cache["used_names"]

    def uses_spmd(self) -> bool:
        """SPMD: ``xr.use_spmd()``, ``torch_xla.distributed.spmd`` (or the old
        ``experimental.xla_sharding``), or ``XLA_USE_SPMD`` set in the environment."""
        if "spmd" not in self._cache:
            self._cache["spmd"] = any(
                q == "torch_xla.runtime.use_spmd" or q.startswith(("torch_xla.distributed.spmd",
                                                                   "torch_xla.experimental.xla_sharding"))
                for q in self.used_names()) or any(key == "XLA_USE_SPMD" for key, _, _, _ in self.env_writes())
        return self._cache["spmd"]


def _all_args(args: ast.arguments) -> list[ast.arg]:
    out = list(args.posonlyargs) + list(args.args)
    if args.vararg:
        out.append(args.vararg)
    out.extend(args.kwonlyargs)
    if args.kwarg:
        out.append(args.kwarg)
    return out


def _expr_key(node: ast.AST, limit: int = 200):
    """A hashable structural key for a small expression (iterative; None when too big)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if len(out) > limit:
            return None
        if isinstance(n, ast.AST):
            out.append(type(n).__name__)
            for field in n._fields:
                if field == "ctx":
                    continue
                stack.append(getattr(n, field, None))
        elif isinstance(n, list):
            out.append(len(n))
            stack.extend(n)
        else:
            out.append(repr(n))
    return tuple(out)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if type(handler.type) is ast.Tuple else [handler.type]
    for t in types:
        ident = t.attr if type(t) is ast.Attribute else t.id if type(t) is ast.Name else ""
        if ident in _IMPORT_ERRORS:
            return True
    return False


def _is_main_guard(test: ast.AST) -> bool:
    return type(test) is ast.Compare and type(test.left) is ast.Name and test.left.id == "__name__"

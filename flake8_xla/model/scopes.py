"""Scopes and bindings: the records the walk fills and every query reads.

:class:`Scope` holds a scope's bindings (``(line, kind, target, ctx)``; kind is
``import``, ``value``, ``def``, ``class``, ``param`` or ``unknown``); :class:`Ctx` says
where a node sits (scope, enclosing function, enclosing loops, the ``if`` frames around
it); :class:`FunctionInfo`, :class:`ClassInfo` and :class:`LoopInfo` describe the module's
functions, classes and loops. Also the small AST helpers the other parts share.
"""

from __future__ import annotations

import ast
import sys
from itertools import chain

TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _line_of(binding) -> int:
    return binding[0]


_OFF = "off"  # a branch frame that is XLA-off by construction (except ImportError of torch_xla)
_GUARDED = "guarded"  # the body of a try whose handler catches ImportError (a version fallback)
_FALLBACK = "fallback"  # an `except ImportError/AttributeError:` handler: version-adaptive, not XLA-off
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"})

# Fields that never hold a child node worth visiting (strings, ints, operator singletons).
_SKIP_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "arg", "attr", "name", "names", "module", "level", "kind", "conversion",
     "type_comment", "is_async", "n", "s", "asname", "kwd_attrs", "rest", "lineno"}
)
_FIELDS_CACHE: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS_CACHE.get(cls)
    if fields is None:
        if cls is ast.Constant:
            fields = ()
        else:
            fields = tuple(f for f in getattr(cls, "_fields", ()) if f not in _SKIP_FIELDS)  # () for a str
        _FIELDS_CACHE[cls] = fields
    return fields


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


class Frames:
    """The branch frames around a node: an immutable chain, innermost first when iterated.

    A frame is ``(test expr, polarity)`` (the body of ``if test:`` is ``(test, True)``, its
    ``else`` and the code after ``if test: return`` are ``(test, False)``) or one of the
    markers ``_OFF``, ``_GUARDED``, ``_FALLBACK``. Chains share their tails, so N nested or
    consecutive branches cost N links, not N squared; the model memoises its verdicts on
    each link (``off``, ``va``, ``guarded``), so a query costs only the links not yet seen.
    """

    __slots__ = ("frame", "parent", "off", "va", "guarded", "tc", "memo")

    def __init__(self, frame, parent):
        self.frame = frame
        self.parent = parent  # Frames or None
        self.off = None  # XLA-off verdict of this chain (context.py), None until asked
        self.va = None  # version-adaptive verdict (context.py)
        self.guarded = None  # a _GUARDED marker anywhere in the chain
        self.tc = None  # inside `if TYPE_CHECKING:` (walk.py)
        self.memo = None  # verdicts of the other chain queries, by key (Model.any_branch), once asked

    def __iter__(self):
        node = self
        while node is not None:
            yield node.frame
            node = node.parent

    def __bool__(self) -> bool:
        return True


def push_frame(frames, frame) -> Frames:
    """``frames`` (a chain, or an empty tuple for none) with ``frame`` innermost."""
    return Frames(frame, frames or None)


def chain_any(frames, attr, verdict) -> bool:
    """True when ``verdict(frame)`` holds for some frame of the chain ``frames``.

    Memoised on each link: in its slot ``attr`` (``off``, ``va``, ``guarded``, ``tc``), or
    for any other hashable ``attr`` in the link's ``memo`` dict. A query walks only the
    links no earlier query has settled, so asking at every node of an N-branch chain costs
    N, not N squared. ``verdict`` is called outermost first, only until one frame holds."""
    if not frames:
        return False
    if attr not in _SLOTS:
        return _chain_any_keyed(frames, attr, verdict)
    todo = []
    node = frames
    while node is not None and getattr(node, attr) is None:
        todo.append(node)
        node = node.parent
    result = getattr(node, attr) if node is not None else False
    for link in reversed(todo):  # outermost first
        result = result or bool(verdict(link.frame))
        setattr(link, attr, result)
    return getattr(frames, attr)


_SLOTS = frozenset({"off", "va", "guarded", "tc"})


def _chain_any_keyed(frames, key, verdict) -> bool:
    todo = []
    node = frames
    while node is not None and (node.memo is None or key not in node.memo):
        todo.append(node)
        node = node.parent
    result = node.memo[key] if node is not None else False
    for link in reversed(todo):  # outermost first
        result = result or bool(verdict(link.frame))
        if link.memo is None:
            link.memo = {}
        link.memo[key] = result
    return result


class Ctx:
    """Where a node sits: scope, enclosing function, enclosing loops, ``if`` frames."""

    __slots__ = ("scope", "func", "loops", "frames")

    def __init__(self, scope, func, loops, frames):
        self.scope = scope
        self.func = func  # FunctionInfo or None (module/class level)
        self.loops = loops  # tuple of LoopInfo, innermost last, within the same function
        self.frames = frames  # Frames (innermost first), or () for none


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
    __slots__ = ("node", "ctx", "own", "inner", "_calls", "_order")

    def __init__(self, node, ctx, order=None):
        self.node = node
        self.ctx = ctx
        self.own: list = []  # (Call, ctx) of the calls whose innermost loop is this one
        self.inner: list = []  # the loops directly inside this one (LoopInfo)
        self._calls = None
        # the walk's calls, shared by every loop of the module: [list of (Call, ctx) in walk
        # order, and once built, (Call, ctx) -> its position in that list]
        self._order = order if order is not None else [[], None]

    @property
    def calls(self) -> list:
        """(Call, ctx) anywhere in the body (nested loops included), in walk order. Built on
        first use from the loop's own calls and its inner loops' (the walk records each call
        in its innermost loop only: N nested loops cost N, not N squared); do not modify."""
        found = self._calls
        if found is None:
            if self.inner:
                order = self._order
                if order[1] is None:
                    order[1] = dict(zip(order[0], range(len(order[0]))))
                found = sorted(chain(self.own, *[i.calls for i in self.inner]), key=order[1].__getitem__)
            else:
                found = self.own
            self._calls = found
        return found


def param_default(args: ast.arguments, name: str) -> ast.expr | None:
    """The default expression of parameter ``name`` of a ``def`` whose arguments are
    ``args`` (positional defaults align with the last positional parameters; keyword-only
    ones pair with ``kw_defaults``); ``None`` when it has none or is no such parameter."""
    positional = args.posonlyargs + args.args
    names = [a.arg for a in positional]
    if name in names:
        j = names.index(name) - (len(positional) - len(args.defaults))
        return args.defaults[j] if j >= 0 else None
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        if a.arg == name:
            return d
    return None


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


def expr_key(node: ast.AST) -> tuple:
    """A hashable structural key of any expression: equal for expressions that are equal
    up to positions and load/store context (``ast.dump`` without its recursion, or the
    reference cycle each of its calls leaves for the garbage collector)."""
    return _expr_key(node, limit=sys.maxsize)


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
    """``__name__ == "__main__"`` (either operand order: ``"__main__" == __name__``)."""
    return type(test) is ast.Compare and (
        (type(test.left) is ast.Name and test.left.id == "__name__")
        or (len(test.comparators) == 1 and type(test.comparators[0]) is ast.Name
            and test.comparators[0].id == "__name__"))


def _case_test(case):
    """The frame test the walk gives a ``case`` (walk.py ``_on_match``): the value of
    ``case 0:``, the pattern of ``case 0 | 50:``; None for any other pattern."""
    pattern = case.pattern
    if type(pattern) is ast.MatchValue:
        return pattern.value
    return pattern if type(pattern) is ast.MatchOr else None

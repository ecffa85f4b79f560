"""Constants across calls: which branch of a function a constant argument selects.

The summary side (plain facts of one module, from its model) and the reach side (evaluated
while the project's launched code is followed, :func:`flake8_xla.project._reached_from`).

A *context* is what is known of a function's parameters where it runs: ``{chain: value}``
for a parameter or an attribute chain rooted in one (``{"name": "tpu"}``,
``{"cfg.backend": "tpu"}``), values literal constants (strings, numbers, booleans,
``None``). It comes from the call sites: ``get_backend("tpu")``, ``get_backend(cfg.backend)``
where the caller's context knows ``cfg.backend``, and a launch under
``if cfg.backend == "tpu": torch_xla.launch(worker, args=(cfg,))``.

A *guard* is what must hold for one occurrence of a call or reference to run: the
``==`` / ``!=`` / ``is`` tests on such chains of the ``if`` statements around it (also the
code after ``if test: return``, where the test failed), and the probes of the run
(``torch.cuda.is_available()``, ``is_xla_available()``: :data:`RUN_FACTS`, what an XLA
run knows of them). An edge of the call graph whose
every occurrence has a guard the caller's context makes false does not run:
``get_backend("tpu")`` runs ``XlaBackend()``, never ``CudaBackend()``. Everything not
decided stays possible (unknown never prunes).
"""

from __future__ import annotations

import ast

from ..model.runtime import chain_parts

#: a literal value as facts hold it: (type name, value), so that True and 1 differ
Value = tuple
#: one test: (chain, value, equal, identity): ``chain == value`` (``is`` with identity) holds
#: (equal) or fails (not equal)
Cond = tuple
#: the kinds of an object value in a context: ``("obj", class ref, the constructor's context)``
#: for the instance one constructor call builds, ``("objs", obj values)`` for a list of them
OBJECTS = ("obj", "objs")
#: every value kind that is no literal: objects, a function (``("fn", ref)``), the tuple a
#: ``*args`` parameter holds (``("tuple", values or None)``), and one of several values
#: (``("any", values)``: an object whose constructor's branches are told apart per value,
#: :func:`flake8_xla.project._object_value`)
NOT_LITERAL = OBJECTS + ("fn", "tuple", "any")
#: the value of a chain that equals none of the literals its tests name (the ``else`` of the
#: branches an object is told apart by)
OTHER = ("other", None)
#: the keyword slot of a ``*name`` argument in :func:`passes` form: ``(index, SPLAT, ("chain", name))``
#: splices the ``("tuple", values)`` the name holds at ``index``
SPLAT = "*"
#: how many contexts one function is followed with before the rest count as unknown
MAX_CONTEXTS = 8
#: how many conditions one guard keeps (the innermost)
MAX_CONDS = 8

_LITERALS = (str, int, float, bool, type(None))


def literal(expr: ast.AST) -> Value | None:
    """``(type name, value)`` of a literal constant expression, else ``None``."""
    if type(expr) is ast.Constant and type(expr.value) in _LITERALS:
        return type(expr.value).__name__, expr.value
    return None


def stable_chain(model, expr: ast.AST, ctx) -> str | None:
    """``"cfg.backend"`` for a name or attribute chain whose root has exactly one binding
    where it is read (a parameter nothing rebinds, a local bound once), in a function that is
    not nested in another (its ``if`` frames would be the outer function's); for an
    attribute chain, also no attribute store or ``setattr`` on the root in the function, and
    no call handed the root before the read (``force_cuda(cfg)`` may set ``cfg.backend``).
    Else ``None``."""
    parts = chain_parts(expr)
    if parts is None or ctx is None or ctx.func is None or ctx.func.ctx.func is not None:
        return None
    bindings = model.lookup(parts[0], ctx, None)
    if not bindings or len(bindings) != 1 or bindings[0][1] not in ("param", "value"):
        return None
    b_ctx = bindings[0][3]
    if b_ctx is not None and b_ctx.func is not ctx.func and bindings[0][1] != "param":
        return None
    if len(parts) > 1 and _clobbered(model, ctx.func, parts[0], getattr(expr, "lineno", 0)):
        return None
    return ".".join(parts)


def _clobbered(model, func, root: str, line: int) -> bool:
    """In ``func``, an attribute store on ``root`` (``root.x = ...`` anywhere in it, also in
    its nested code), a ``setattr(root, ...)``, or a call before ``line`` that is handed
    ``root`` itself. Indexed once per function."""
    by_func = model._cache.get("const_stores")
    if by_func is None:  # id(function) -> roots stored to in it or its nested code, once per module
        by_func = model._cache["const_stores"] = {}
        for target, _, sctx in model.attr_stores:
            parts = chain_parts(target)
            f = sctx.func
            while parts and f is not None:
                by_func.setdefault(id(f), set()).add(parts[0])
                f = f.ctx.func
    key = ("const_clobber", id(func))
    index = model._cache.get(key)
    if index is None:
        stores: set[str] = set(by_func.get(id(func), ()))
        handed: dict[str, int] = {}
        for call, cctx in func.calls:
            if type(call.func) is ast.Name and call.func.id in ("setattr", "delattr") and call.args \
                    and type(call.args[0]) is ast.Name:
                stores.add(call.args[0].id)
            for a in list(call.args) + [k.value for k in call.keywords]:
                if type(a) is ast.Starred:
                    a = a.value
                if type(a) is ast.Name:
                    first = handed.get(a.id)
                    handed[a.id] = call.lineno if first is None else min(first, call.lineno)
        index = model._cache[key] = (stores, handed)
    stores, handed = index
    return root in stores or handed.get(root, line) < line


#: what the reach knows of the run it follows, an XLA run, where no context says otherwise:
#: torch_xla imports (an ``is_xla_available()`` probe holds) and CUDA is not there (a
#: ``torch.cuda.is_available()`` test fails: ``elif torch.cuda.is_available(): DeviceEnvCuda()``
#: after the XLA branch, or before it, builds nothing in a TPU replica)
RUN_FACTS = {"@xla": ("bool", True), "@cuda": ("bool", False), "@off": ("bool", False)}
#: the guard of a call in a branch the model classifies as XLA-off by its test's names (``else:``
#: of ``if HAS_XLA:``, ``if cfg.device == "cuda":``; the model's ``is_xla_off``): it needs XLA
#: off, which an XLA run is not, unless a constant of the context decides another condition of
#: the same guard (``get_backend("cuda")`` of a factory testing ``name == "cuda"``: the
#: constant, not the name, says which branch runs)
XLA_OFF = ("@off", ("bool", True), True, False)
#: library probes of an importable torch_xla
XLA_PROBES = frozenset({
    "transformers.utils.is_torch_xla_available", "transformers.is_torch_xla_available",
    "transformers.utils.is_torch_tpu_available", "transformers.is_torch_tpu_available",
    "transformers.utils.import_utils.is_torch_xla_available",
    "accelerate.utils.is_torch_xla_available", "accelerate.utils.is_tpu_available",
    "accelerate.utils.imports.is_torch_xla_available",
})


def run_probe(model, call: ast.Call, ctx) -> str | None:
    """``"@cuda"`` for ``torch.cuda.is_available()``, ``"@xla"`` for a probe of an importable
    torch_xla (a library's ``is_torch_xla_available()``, or a project function whose body
    tries ``import torch_xla`` and returns ``False`` on the ``ImportError``:
    :func:`xla_probe`), else ``None``."""
    if call.args or call.keywords:
        return None
    q = model.call_name(call, ctx)
    if q == "torch.cuda.is_available":
        return "@cuda"
    if q in XLA_PROBES:
        return "@xla"
    if type(call.func) is ast.Name:
        funcs = model.function_of(call.func, ctx)
        if funcs:
            return "@xla" if len(funcs) == 1 and xla_probe(funcs[0].node) else None
    facts = model._project_def(call.func, ctx) if model.project_defs is not None else None
    return "@xla" if facts is not None and facts.xla_probe else None


def xla_probe(func: ast.AST) -> bool:
    """``def is_xla_available(): try: import torch_xla ... except ImportError: return False;
    return True``: a ``try`` whose body imports torch_xla and whose handlers return
    ``False``, and no other ``return`` but ``return True`` (a body of at most 16 statements)."""
    if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef) or func.args.args or len(func.body) > 16:
        return False
    probed = False
    for node in ast.walk(func):
        t = type(node)
        if t is ast.Try:
            imports = any(type(n) in (ast.Import, ast.ImportFrom) and _names_torch_xla(n) for b in node.body
                          for n in ast.walk(b))
            falsy = bool(node.handlers) and all(
                any(type(n) is ast.Return and type(n.value) is ast.Constant and n.value.value is False
                    for b in h.body for n in ast.walk(b)) for h in node.handlers)
            probed = probed or (imports and falsy)
        elif t is ast.Return and not (type(node.value) is ast.Constant and type(node.value.value) is bool):
            return False
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda) and node is not func:
            return False
    return probed


def _names_torch_xla(node) -> bool:
    if type(node) is ast.Import:
        return any(a.name.split(".")[0] == "torch_xla" for a in node.names)
    return not node.level and (node.module or "").split(".")[0] == "torch_xla"


def _test_conds(model, test: ast.AST, polarity: bool, ctx, out: list) -> None:
    t = type(test)
    if t is ast.UnaryOp and type(test.op) is ast.Not:
        _test_conds(model, test.operand, not polarity, ctx, out)
    elif t is ast.BoolOp and type(test.op) is (ast.And if polarity else ast.Or):
        for v in test.values:  # every operand holds (an `and` taken) / fails (an `or` not taken)
            _test_conds(model, v, polarity, ctx, out)
    elif t is ast.Compare and len(test.ops) == 1:
        op = type(test.ops[0])
        if op not in (ast.Eq, ast.NotEq, ast.Is, ast.IsNot):
            return
        left, right = test.left, test.comparators[0]
        value, other = literal(right), left
        if value is None:
            value, other = literal(left), right
        if value is None:
            return
        chain = stable_chain(model, other, ctx)
        if chain is not None:
            out.append((chain, value, polarity == (op in (ast.Eq, ast.Is)), op in (ast.Is, ast.IsNot)))
    elif t is ast.Call:
        probe = run_probe(model, test, ctx)
        if probe is not None:  # if torch.cuda.is_available(): / elif is_xla_available():
            out.append((probe, ("bool", True), polarity, False))


def guard(model, ctx) -> tuple[Cond, ...]:
    """The conditions of the ``if`` frames around ``ctx`` (innermost first, at most
    :data:`MAX_CONDS`) that are tests of a stable chain against a literal. Memoised per
    frame chain."""
    frames = ctx.frames
    if not frames:
        return ()
    key = ("const_guard", id(frames), id(ctx.func))
    cache = model._cache
    found = cache.get(key)
    if found is None:
        out: list = []
        for frame in frames:
            if type(frame) is tuple and len(frame) == 2 and isinstance(frame[0], ast.AST):
                _test_conds(model, frame[0], bool(frame[1]), ctx, out)
                if len(out) >= MAX_CONDS:
                    break
        found = cache[key] = tuple(out[:MAX_CONDS])
    return found


def frame_conds(model, ctx, base) -> tuple | None:
    """The conditions of the ``if`` frames of ``ctx`` inside the frame chain ``base`` (the
    function's own, at most three), every frame's test giving some (a test of a stable
    chain against a literal, a run probe); ``None`` when one gives none."""
    out: list = []
    link = ctx.frames or None
    n = 0
    while link is not None and link is not base:
        frame = link.frame
        n += 1
        if n > 3 or not (type(frame) is tuple and len(frame) == 2 and isinstance(frame[0], ast.AST)):
            return None
        got: list = []
        _test_conds(model, frame[0], bool(frame[1]), ctx, got)
        if not got:
            return None
        out.extend(got)
        link = link.parent
    return tuple(out)


def decided(conds: tuple[Cond, ...], context: dict) -> bool | None:
    """``True`` when ``context`` makes every one of ``conds`` hold, ``False`` when it makes
    one fail (:func:`holds`), ``None`` when that is not told."""
    if not holds(conds, context):
        return False
    for chain, _, _, _ in conds:
        known = context.get(chain)
        if (known is None or known[0] in NOT_LITERAL) and chain[:1] != "@":
            return None
    return True


def passes(model, call: ast.Call, ctx, new=None) -> tuple:
    """``((index or None, keyword or None, ("const", value) | ("chain", "cfg.x")), ...)``:
    the arguments of ``call`` that are literals or stable chains (positions stop at a
    ``*args`` splat, itself ``(index, SPLAT, ("chain", "args"))``; ``**kwargs`` gives nothing). With ``new`` (the summary's
    ``new(expr, ctx)``: ``("new", class ref, its constructor's passes)`` / ``("news", items)``
    for an argument holding instances one constructor call each builds), those too, and the
    receiver of ``obj.m(...)`` at index ``-1`` (the method's own first parameter)."""
    out = []
    if new is not None and type(call.func) is ast.Attribute:
        got = new(call.func.value, ctx)
        if got is not None:
            out.append((-1, None, got))
    for i, a in enumerate(call.args):
        if type(a) is ast.Starred:  # f(*args): the tuple spliced there, when told (positions after it are not)
            got = _argument(model, a.value, ctx, new) if type(a.value) is ast.Name else None
            if got is not None and got[0] == "chain":
                out.append((i, SPLAT, got))
            break
        got = _argument(model, a, ctx, new)
        if got is not None:
            out.append((i, None, got))
    for k in call.keywords:
        if k.arg is not None:
            got = _argument(model, k.value, ctx, new)
            if got is not None:
                out.append((None, k.arg, got))
    return tuple(out)


def _argument(model, expr: ast.AST, ctx, new=None):
    value = literal(expr)
    if value is not None:
        return "const", value
    if new is not None:
        got = new(expr, ctx)
        if got is not None:
            return got
    parts = chain_parts(expr) if type(expr) is ast.Attribute else None
    if parts is not None and ctx is not None and ctx.func is not None \
            and _clobbered(model, ctx.func, parts[0], getattr(expr, "lineno", 0)):
        stored = _stored_literal(model, parts, ctx, getattr(expr, "lineno", 0))
        return ("const", stored) if stored is not None else None  # config.STRATEGY = "cuda" before it
    if parts is not None and model.project_defs is not None:
        got = model.const(expr, ctx)  # config.BACKEND: a literal constant of a project module (not one set here)
        if type(got) in _LITERALS:
            return "const", (type(got).__name__, got)
    chain = stable_chain(model, expr, ctx)
    return ("chain", chain) if chain is not None else None


def _stored_literal(model, parts, ctx, line: int) -> Value | None:
    """The literal the last store of the chain ``parts`` (``config.STRATEGY = "cuda"``) before
    ``line`` in ``ctx``'s own function puts there, when that store is at the function's own
    level (no branch, no loop) and no store of another chain on the same root comes after
    it; else ``None``."""
    func = ctx.func
    parts = tuple(parts)
    last = None  # (line, target parts, value, ctx) of the latest store on the root before `line`
    for target, value, sctx in model.attr_stores:
        got = chain_parts(target)
        if sctx.func is not func or got is None or got[0] != parts[0] or target.lineno >= line:
            continue
        if last is None or target.lineno > last[0]:
            last = (target.lineno, tuple(got), value, sctx)
    if last is None or last[1] != parts or last[3].loops or last[3].frames is not func.ctx.frames \
            or last[2] is None:
        return None
    return literal(last[2])


# -- the reach side -------------------------------------------------------------------------

def holds(conds: tuple[Cond, ...], context: dict) -> bool:
    """False when ``context`` makes one of ``conds`` fail; True otherwise (unknown holds).
    ``==`` compares as Python does (``True == 1``, ``1.0 == 1``); ``is`` also the type."""
    for chain, value, equal, identity in conds:
        if chain == "@off" and any(c[0] in context for c in conds if c[0][:1] != "@"):
            continue  # (a constant decides this guard: the branch's name does not)
        known = context.get(chain)
        if known is None:
            known = RUN_FACTS.get(chain) if chain[:1] == "@" else None
            if known is None:
                continue
        if known[0] in NOT_LITERAL:  # an object or a function: only `is None` is told
            if identity and value == ("NoneType", None) and equal:
                return False
            continue
        same = False if known is OTHER or known == OTHER else \
            known == value if identity else _equal(known[1], value[1])
        if same != equal:
            return False
    return True


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # (literals compare without raising; unknown holds)
        return True


def bind(args: tuple, context: dict, params: tuple[str, ...], offset: int = 0, objects=None,
         varargs: str = "") -> dict:
    """The callee's context: what ``args`` (:func:`passes`) carry from the caller's
    ``context`` into ``params`` (positions shifted by ``offset``: the process index of a
    launched function, a method's ``self``; the receiver's index ``-1`` is the parameter
    before the first). ``objects(arg, context)`` gives the value of a ``"new"`` / ``"news"``
    argument (the project layer's object values); without it they carry nothing. The
    positions past ``params`` go to the ``*args`` parameter ``varargs`` as one
    ``("tuple", values)`` (``None`` for a position not known)."""
    out: dict = {}
    extra: dict[int, object] = {}
    for index, keyword, arg in args:
        kind, what = arg[0], arg[1]
        if keyword == SPLAT:  # f(*args): each item the tuple is known to hold, from index on
            items = _value(arg, context, objects)
            if items is not None and items[0] == "tuple":
                spliced = tuple((index + j, None, ("value", v)) for j, v in enumerate(items[1]) if v is not None)
                out.update(bind(spliced, {}, params, offset, None, varargs))
            continue
        if index is not None:
            index += offset
            if varargs and index >= len(params):
                value = _value(arg, context, objects)
                if value is not None:
                    extra[index - len(params)] = value
                continue
            name = params[index] if 0 <= index < len(params) else None
        else:
            name = keyword if keyword in params else None
        if name is None:
            continue
        if kind == "chain":
            prefix = what + "."
            for chain, value in context.items():
                if chain == what:
                    out[name] = value
                elif chain.startswith(prefix):
                    out[name + chain[len(what):]] = value
            if name not in out and objects is not None and "." in what:
                value = objects(arg, context)  # self.strategy: an attribute of an object the context holds
                if value is not None:
                    out[name] = value
            continue
        value = _value(arg, context, objects)
        if value is not None:
            out[name] = value
    if extra:
        out[varargs] = ("tuple", tuple(extra.get(i) for i in range(max(extra) + 1)))
    return out


def _value(arg: tuple, context: dict, objects) -> object:
    """The context value of one argument (:func:`passes` form) in ``context``: a literal, a
    function, what a chain holds (through the attributes of an object the context holds,
    by ``objects``), an object a constructor call builds, an attribute of one (``"get"``),
    the first truthy item of ``a or b`` (``"or"``); ``None`` when unknown."""
    kind, what = arg[0], arg[1]
    if kind == "const":
        return what
    if kind == "fn":
        return arg
    if kind == "value":  # (a value already evaluated: an item of a spliced tuple)
        return what
    if kind == "chain":
        got = context.get(what)
        if got is None and objects is not None and "." in what:
            got = objects(arg, context)
        return got
    if kind == "alts":  # the value the last branch told to run stores; unknown when one is not told
        got = None
        for conds, item in what:
            verdict = decided(conds, context)
            if verdict is None:
                return None
            if verdict:
                got = _value(item, context, objects)
        return got
    if kind == "or":
        for item in what:
            got = _value(item, context, objects)
            if got is None:
                return None
            if got[0] in NOT_LITERAL or got[1]:
                return got
        return None
    if kind in ("new", "news", "get", "elt", "either", "ret", "reg", "nth"):
        return objects(arg, context) if objects is not None else None
    return None


def positive(conds: tuple[Cond, ...]) -> dict:
    """``{chain: value}`` of the equalities among ``conds`` that hold (what a guarded call
    site knows of its chains: ``if cfg.backend == "tpu": launch(...)``)."""
    return {chain: value for chain, value, equal, identity in conds if equal}


def frozen(context: dict) -> tuple:
    """A hashable, ordered form of a context."""
    return tuple(sorted(context.items(), key=lambda kv: kv[0]))

"""XLA context and backend dispatch: is code at a place XLA code?

A branch that runs only without XLA (the ``else`` of an ``if`` that guards the torch_xla
import, ``if torch.cuda.is_available():``, ``case "cuda":``, the handler of the torch_xla
import's ``except ImportError``) is XLA-off, and so is a function only such branches call.
Also version-adaptive code (``hasattr(torch_xla, "sync")``, ``__version__`` tests).
"""

from __future__ import annotations

import ast
import re

from .scopes import _FALLBACK, _GUARDED, _OFF, Ctx, FunctionInfo, _expr_key, chain_any


class XlaContext:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def in_xla_code(self, ctx: Ctx) -> bool:
        """True when code at ``ctx`` runs as XLA code (module scope and not an XLA-off branch)."""
        if not (self.uses_torch_xla or self.settings.scope == "always" or self.in_project_reach(ctx)):
            return False  # (a module without torch_xla: XLA code only where XLA code of the project reaches)
        if self.project_overridden and ctx.func is not None and self._in_overridden(ctx.func):
            return False  # a base method every launched object overrides (project mode)
        return not self.is_xla_off(ctx)

    def _in_overridden(self, func) -> bool:
        quals = self.function_quals()
        while func is not None:
            if quals.get(id(func)) in self.project_overridden:
                return True
            func = func.ctx.func
        return False

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
        nothing in the module refers to (an entry point) is not.

        Memoised per (function, depth): ``_depth`` is how many callers were followed to get
        here, and the bound of 16 makes a deeper question a different one; keyed so, a
        verdict never depends on which function a rule asked about first (each level asks
        one level deeper, so the recursion has no cycles)."""
        key = ("foff", id(func), _depth)
        cache = self._cache
        found = cache.get(key)
        if found is not None:
            return found
        cache[key] = False  # asked again while deciding (through a binding's context): not off
        sites = self._func_sites(func)
        result = bool(sites) and all(self.is_xla_off(c, _depth) for c in sites) and not self.runs_xla_itself(func)
        cache[key] = result
        return result

    def runs_xla_itself(self, func: FunctionInfo) -> bool:
        """``func``'s own body calls torch_xla outside any backend test of its own
        (``pl.MpDeviceLoader(loader, device)``, ``xm.optimizer_step(opt)``): whoever calls it,
        it runs on XLA, so a caller's backend branch (``if recipe == "cuda":
        train_cuda_recipe(...)``, a CUDA *recipe* run on the TPU) does not make it XLA-off.
        A call under ``if use_tpu:`` / ``if torch.cuda.is_available():`` inside it, in a
        version-adaptive branch or in the fallback of a torch_xla import decides nothing.
        Memoised per function."""
        key = ("runs_xla", id(func))
        found = self._cache.get(key)
        if found is None:
            found = False
            base = func.ctx.frames if func.ctx is not None else None
            for call, ctx in func.calls:
                if ctx.func is not func:
                    continue
                q = self.call_name(call, ctx)
                if q is None or not (q == "torch_xla" or q.startswith("torch_xla.")):
                    continue
                if not self._backend_framed(ctx.frames, base) and not self.version_adaptive(ctx):
                    found = True
                    break
            self._cache[key] = found
        return found

    def _backend_framed(self, frames, base) -> bool:
        """Some branch frame from ``frames`` up to ``base`` (the function's own) is a backend
        test, a guarded import or its fallback."""
        node = frames
        for _ in range(64):
            if node is None or node is base or not node:
                return False
            frame = node.frame
            if frame is _OFF or frame is _GUARDED or frame is _FALLBACK:
                return True
            if self._classify(frame[0]) != (False, False):
                return True
            node = node.parent
        return True

    def _func_sites(self, func: FunctionInfo) -> list[Ctx]:
        """The contexts that call or name ``func``: the reads of its name that see its
        ``def``, then (for a method) the ``x.name(...)`` calls that resolve to it."""
        return self._sites_of_name(func.name).get(id(func), [])

    def _sites_of_name(self, name: str) -> dict[int, list[Ctx]]:
        """id(function) -> :meth:`_func_sites` for every function called ``name``, indexed once
        per name: each read and each ``x.name(...)`` call is resolved once, not once per
        function of that name (N ``forward`` methods and N ``.forward(x)`` calls)."""
        key = ("fsites", name)
        index = self._cache.get(key)
        if index is None:
            index = self._cache[key] = {}
            for c in self.name_loads.get(name, ()):
                done = set()
                for _, kind, target, _ in self.lookup(name, c, None) or ():
                    if kind == "def" and id(target) not in done:
                        done.add(id(target))
                        index.setdefault(id(target), []).append(c)
            methods = self._method_ids().get(name)
            if methods:
                for call, c in self.method_calls(name):
                    done = set()
                    for f in self.function_of(call.func, c):
                        if id(f) in methods and id(f) not in done:
                            done.add(id(f))
                            index.setdefault(id(f), []).append(c)
        return index

    def _method_ids(self) -> dict[str, set[int]]:
        """name -> ids of the functions of that name defined in a class body (built once)."""
        found = self._cache.get("method_ids")
        if found is None:
            found = self._cache["method_ids"] = {}
            for f in self.functions:
                if f.cls is not None:
                    found.setdefault(f.name, set()).add(id(f))
        return found

    def any_branch(self, ctx: Ctx, key, verdict) -> bool:
        """True when ``verdict(frame)`` holds for a branch frame around ``ctx`` (frames as in
        :class:`~flake8_xla.model.scopes.Frames`). Memoised per link of the frame chain under
        ``key`` (one key per question, hashable), so asking at N places after N early
        returns costs N verdicts, not N squared; the verdict must depend only on the frame."""
        return chain_any(ctx.frames, key, verdict)

    def _frames_off(self, ctx: Ctx) -> bool:
        """True when a branch frame around ``ctx`` is XLA-off (memoised per link)."""
        return chain_any(ctx.frames, "off", self._frame_off)

    def _frame_off(self, frame) -> bool:
        if frame is _OFF:
            return True
        if frame is _GUARDED or frame is _FALLBACK:
            return False
        test, polarity = frame
        off_true, off_false = self._classify(test)
        return (polarity and off_true) or (not polarity and off_false)

    def xla_branches(self, expr: ast.IfExp) -> list[ast.expr]:
        """The branches of ``a if test else b`` that can run in XLA code: a branch the test
        selects only off XLA (``cuda_state if not args.tpu else cpu_copy``, the ``if`` tests
        of :meth:`is_xla_off`) is left out."""
        off_true, off_false = self._classify(expr.test)
        return [branch for branch, off in ((expr.body, off_true), (expr.orelse, off_false)) if not off]

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
        if id(test) in self.chain_off:
            return self.chain_off[id(test)]
        key = _expr_key(test)
        if key is not None and key in self.guard_tests:  # `if in_colab and on_tpu:` guarding the import
            return self.guard_tests[key]
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
                    off_false = all(v[1] for v in vals) or (
                        # `is_tpu_available() and not cpu`: a backend test the user may force
                        # onto the CPU; when false, no XLA device is chosen either way
                        any(v[1] for v in vals)
                        and all(v[1] or _cpu_opt_out(x) for v, x in zip(vals, node.values)))
                    results[id(node)] = (any(v[0] for v in vals), off_false)
                else:
                    results[id(node)] = (all(v[0] for v in vals), any(v[1] for v in vals))
            else:
                results[id(node)] = self._classify_atom(node)
        return results[id(test)]

    def _classify_atom(self, node):
        key = _expr_key(node)
        if key is not None and key in self.guard_tests:
            return self.guard_tests[key]
        sign = self._atom_sign(node)
        if sign > 0:
            return (False, True)
        if sign < 0:
            return (True, False)
        return (False, False)

    def _atom_sign(self, node):
        """+1: true means XLA is on; -1: true means XLA is off (a CUDA test); 0: unrelated."""
        t = type(node)
        if isinstance(node, ast.pattern):  # case "cuda" | "gpu", Cuda(...), ("cuda", r), ... as b
            return self._pattern_sign(node)
        if t is ast.Constant and isinstance(node.value, str):  # a `case "cuda":` pattern
            low = node.value.lower()
            return 1 if low.startswith(("xla", "tpu")) else -1 if low.startswith(("cuda", "gpu")) else 0
        if t is ast.Compare and len(node.ops) == 1 and _torch_launch_rank_test(node):
            return -1  # args.local_rank != -1: started by torch.distributed.launch / torchrun (GPU)
        env = self._env_test_sign(node)
        if env:
            return env  # "PJRT_DEVICE" in os.environ, os.getenv("COLAB_TPU_ADDR") is not None
        if t is ast.Name:
            q = self.qualname(node, Ctx(self.module_scope, None, (), ()))
            if q is not None and (q == "torch_xla" or q.startswith("torch_xla.")):
                return 1  # `if xm:` of a try-import of torch_xla whose fallback is None
        if t is ast.Compare and len(node.ops) == 1 and not any(
                type(c) is ast.Constant and isinstance(c.value, str) for c in (node.left, node.comparators[0])) \
                and not _string_collection(node.comparators[0]) \
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
            signs = {1 if s.startswith(("xla", "tpu")) else -1 if s.startswith(("cuda", "gpu", "nccl")) else 0
                     for s in strings} - {0}
            sign = signs.pop() if len(signs) == 1 else 0  # ("tpu", "gpu"): both backends, unrelated
            if type(op) in (ast.NotEq, ast.NotIn, ast.IsNot):
                sign = -sign
            return sign
        if t is ast.Name and node.id in self.probe_flags:  # try: import torch_xla; HAS_XLA = True
            return 1
        if t is ast.Call and self.probe_flags and self._returns_probe_flag(node):
            return 1
        if t is ast.Call:
            if type(node.func) is ast.Attribute and node.func.attr in ("startswith", "endswith") and node.args \
                    and type(node.args[0]) is ast.Constant and isinstance(node.args[0].value, str):
                return self._atom_sign(node.args[0])  # device.startswith("cuda")
            if type(node.func) is ast.Attribute and node.func.attr == "get" and node.args \
                    and type(node.args[0]) is ast.Constant and isinstance(node.args[0].value, str):
                return self._key_sign(node.args[0].value)  # cfg.get("use_tpu")
            node = node.func
            t = type(node)
        if t is ast.Subscript and type(node.slice) is ast.Constant and isinstance(node.slice.value, str):
            return self._key_sign(node.slice.value)  # cfg["use_tpu"], args["cuda"]
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

    _ENV_GETS = ("os.getenv", "os.environ.get")

    def _env_test_sign(self, node) -> int:
        """+1 for a test that a variable only torch_xla's runtime or a TPU host sets is set
        (:func:`_xla_env_name`): ``"PJRT_DEVICE" in os.environ``, ``os.getenv("TPU_NAME")``,
        ``os.environ.get("PJRT_DEVICE")`` (no default or an empty one), ``... is not None``;
        -1 for the negation (``not in``, ``is None``); 0 for anything else (a test of the
        value, ``== "CPU"``, is a string comparison)."""
        t = type(node)
        sign = 1
        if t is ast.Compare and len(node.ops) == 1:
            op, right = node.ops[0], node.comparators[0]
            if type(op) in (ast.In, ast.NotIn):
                if self.qualname(right, Ctx(self.module_scope, None, (), ())) != "os.environ":
                    return 0
                key = node.left
                if type(key) is not ast.Constant or not isinstance(key.value, str) or not _xla_env_name(key.value):
                    return 0
                return -1 if type(op) is ast.NotIn else 1
            if type(op) not in (ast.Is, ast.IsNot) or type(right) is not ast.Constant or right.value is not None:
                return 0
            node, sign = node.left, (1 if type(op) is ast.IsNot else -1)
        if type(node) is not ast.Call or not node.args or len(node.args) > 2 or node.keywords:
            return 0
        if self.qualname(node.func, Ctx(self.module_scope, None, (), ())) not in self._ENV_GETS:
            return 0
        key = node.args[0]
        if type(key) is not ast.Constant or not isinstance(key.value, str) or not _xla_env_name(key.value):
            return 0
        if len(node.args) == 2:
            default = node.args[1]
            if type(default) is not ast.Constant or default.value not in (None, ""):
                return 0  # os.getenv("PJRT_DEVICE", "CPU"): always set
        return sign

    @staticmethod
    def _key_sign(key: str) -> int:
        """The backend a config key names as a flag (``"use_tpu"``, ``"cuda"``), like a name."""
        low = key.lower()
        if "xla" in low or "tpu" in low:
            return 1
        if re.search(r"(^|_)(cuda|gpu|gpus|nccl)($|_)", low):
            return -1
        return 0

    def _pattern_sign(self, pattern) -> int:
        """The backend a ``case`` pattern selects: the common sign of the strings, names and
        classes in it (``"cuda" | "gpu"``, ``Cuda(idx=i)``, ``torch.device(type="cuda")``,
        ``("cuda", rank)``); 0 when they disagree or say nothing."""
        signs = set()
        todo = [pattern]
        seen = 0
        while todo and seen < 256:
            p = todo.pop()
            seen += 1
            t = type(p)
            if t is ast.MatchValue:
                signs.add(self._atom_sign(p.value))
            elif t is ast.MatchOr or t is ast.MatchSequence:
                todo.extend(p.patterns)
            elif t is ast.MatchAs and p.pattern is not None:
                todo.append(p.pattern)
            elif t is ast.MatchClass:
                cls = p.cls
                if not (type(cls) is ast.Attribute and cls.attr == "device"):  # torch.device(...)
                    signs.add(self._atom_sign(cls))
                todo.extend(p.patterns)
                todo.extend(p.kwd_patterns)
            elif t is ast.MatchMapping:
                todo.extend(p.patterns)
        signs.discard(0)
        return signs.pop() if len(signs) == 1 else 0

    def _returns_probe_flag(self, call) -> bool:
        """``xla_ok()`` where every ``return`` of the module function returns a flag set by a
        try-import of torch_xla (``return _XLA_AVAILABLE``)."""
        funcs = self.function_of(call.func, Ctx(self.module_scope, None, (), ()))

        def implies_flag(v):  # `return _OK` or `return _OK and not args.cpu`
            if type(v) is ast.BoolOp and type(v.op) is ast.And:
                return any(type(x) is ast.Name and x.id in self.probe_flags for x in v.values)
            return type(v) is ast.Name and v.id in self.probe_flags

        return len(funcs) == 1 and bool(funcs[0].returns) and all(implies_flag(v) for v, _ in funcs[0].returns)

    _VERSION_NAME = re.compile(r"(?i)(version|(^|_)(pt|torch|xla|torch_xla)(_[a-z]+)*_?v?\d)")

    def version_adaptive(self, ctx: Ctx, probe: bool = False) -> bool:
        """True where code picks the torch_xla API that exists at run time: either branch (or
        after the early return) of ``hasattr(<torch_xla module>, "name")``, of a test on
        ``__version__`` or a name like ``is_pt20`` / ``_XLA_GREATER_EQUAL_2_1``, and the
        ``except ImportError:`` fallback of a torch_xla import. With ``probe``, also the body
        of such a ``try`` (importing a name newer than the target there is a forward probe;
        a deprecated or removed one still is the code's main path)."""
        if probe and chain_any(ctx.frames, "guarded", lambda frame: frame is _GUARDED):
            return True

        def version_frame(frame):
            if frame is _OFF or frame is _FALLBACK:
                return True
            return frame is not _GUARDED and self._is_version_test(frame[0], ctx)

        return chain_any(ctx.frames, "va", version_frame)

    def probe_fallback(self, node: ast.AST) -> bool:
        """``node`` sits in the fallback of a ``getattr(<torch_xla module>, "name", fallback)``
        probe (``getattr(torch_xla, "sync", xm.mark_step)``): version-adaptive code. One pass
        over the module's calls, on first use."""
        found = self._cache.get("probe_fallbacks")
        if found is None:
            found = self._cache["probe_fallbacks"] = set()
            for call, ctx in self.calls:
                f = call.func
                if type(f) is ast.Name and f.id == "getattr" and len(call.args) == 3 \
                        and self.lookup("getattr", ctx, None) is None:
                    q = self.qualname(call.args[0], ctx)
                    if q is not None and (q == "torch_xla" or q.startswith("torch_xla.")):
                        found.update(id(n) for n in ast.walk(call.args[2]))
        return id(node) in found

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


def _xla_env_name(key: str) -> bool:
    """An environment variable whose presence says the XLA runtime or a TPU host: torch_xla's
    ``PJRT_*`` / ``XRT_*`` configuration, a name with a ``TPU`` part (``TPU_NAME``,
    ``COLAB_TPU_ADDR``, ``TPU_ACCELERATOR_TYPE``)."""
    up = key.upper()
    return up.startswith(("PJRT_", "XRT_")) or "TPU" in up.split("_")


def _cpu_opt_out(node) -> bool:
    """``not cpu``, ``not args.use_cpu``, ``device != "cpu"``: true when the user did not
    force the CPU (a conjunct of a backend test that keeps the accelerator off when false)."""
    if type(node) is ast.UnaryOp and type(node.op) is ast.Not:
        inner = node.operand
        ident = inner.attr if type(inner) is ast.Attribute else inner.id if type(inner) is ast.Name else ""
        return re.search(r"(?i)(^|_)cpu($|_)", ident) is not None
    if type(node) is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in (ast.NotEq, ast.IsNot):
        right = node.comparators[0]
        return type(right) is ast.Constant and isinstance(right.value, str) and right.value.lower() == "cpu"
    return False


def _string_collection(node) -> bool:
    """``("cuda", "gpu")``, ``["tpu"]``, ``{"xla"}``: a literal collection holding strings."""
    return type(node) in (ast.Tuple, ast.List, ast.Set) and any(
        type(e) is ast.Constant and isinstance(e.value, str) for e in node.elts)


def _torch_launch_rank_test(node) -> bool:
    """``args.local_rank != -1`` (also ``> -1``, ``>= 0``): the distributed run that
    ``torch.distributed.launch`` / torchrun starts, the CUDA path of HF-style scripts (the
    XLA launcher leaves ``--local_rank`` at its default -1)."""
    left, op, right = node.left, node.ops[0], node.comparators[0]
    ident = left.id if type(left) is ast.Name else left.attr if type(left) is ast.Attribute else None
    if type(right) is ast.UnaryOp and type(right.op) is ast.USub and type(right.operand) is ast.Constant \
            and type(right.operand.value) is int:
        value = -right.operand.value  # -1 parses as a negation of 1
    elif type(right) is ast.Constant and type(right.value) is int:
        value = right.value
    else:
        return False
    if ident != "local_rank":
        return False
    return (type(op) in (ast.NotEq, ast.Gt) and value == -1) or (type(op) is ast.GtE and value == 0)

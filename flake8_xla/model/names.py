"""Names: which binding a name means at a use, and the canonical dotted name of a name or
attribute chain rooted in an import (``xm.optimizer_step`` ->
``torch_xla.core.xla_model.optimizer_step`` for every import spelling).

Also the indexes rules query by name: calls by callee, references under a prefix.
"""

from __future__ import annotations

import ast
import bisect

from .walk import dynamic_import_name
from .scopes import Ctx, _line_of

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


_MISSING = object()


def _position(rec) -> tuple[int, int]:
    return rec[0].lineno, rec[0].col_offset


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


class Names:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

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
                        return self._reaching(bindings, i, ctx)
                return bindings
            first = False
            scope = scope.parent
        return None

    def _reaching(self, bindings, i, ctx):
        """The bindings among ``bindings[:i]`` (source order) that may reach a use at
        ``ctx``: the latest, and the ones before it as long as each is in an ``if`` branch
        the use is not in (``if fp16: scaler = GradScaler() else: scaler = None`` reaches a
        use after the ``if`` with both values); at most 8."""
        latest = bindings[i - 1]
        if not self._walked or self._always_before(latest[3], ctx):
            return [latest]
        out = [latest]
        for b in reversed(bindings[:i - 1]):
            out.append(b)
            if self._always_before(b[3], ctx) or len(out) >= 8:
                break
        out.reverse()
        return out

    def _always_before(self, b_ctx, ctx) -> bool:
        """The binding at ``b_ctx`` runs whenever code at ``ctx`` does (in XLA code): each
        of its branch frames the use is not in has an XLA-off other side (``if HAS_XLA:``)."""
        if b_ctx is None or not b_ctx.frames:
            return True
        mine = set()
        node = ctx.frames or None
        while node is not None and len(mine) < 64:
            mine.add(id(node))
            node = node.parent
        node = b_ctx.frames
        while node is not None:
            if id(node) in mine:
                return True
            frame = node.frame
            if type(frame) is not tuple:
                return False
            off_true, off_false = self._classify(frame[0])
            if not (off_false if frame[1] else off_true):
                return False
            node = node.parent
        return True

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
        node = expr
        while type(node) is ast.Attribute:
            node = node.value
        if type(node) is not ast.Name or _depth > 8 or node.id not in self.resolvable:
            return None  # most chains (self.x, locals, call results): no list of parts built
        parts = []
        chain = expr
        while chain is not node:
            parts.append(chain.attr)
            chain = chain.value
        name = node.id
        if self._attr_aliases and parts and ctx.func is not None and ctx.func.cls is not None:
            base = self.attr_alias(node, parts[-1], ctx)  # self._xm.mark_step() after self._xm = xm
            if base is not None:
                parts.pop()
                return canonical(base + "." + ".".join(reversed(parts)) if parts else base)
        scope = ctx.scope
        own = scope.bindings.get(name)
        if _depth == 0 and self._walked and (own is None or len(own) == 1) and name not in scope.globals:
            # the bindings a use sees then depend on its scope only, not on its line or
            # branch: one resolution per (name, scope) serves every chain rooted there
            key = (name, id(scope))
            base = self._resolved.get(key, _MISSING)
            if base is _MISSING:
                base = self._resolved[key] = self._resolve_name(name, ctx, getattr(node, "lineno", None), 0)
        else:
            base = self._resolve_name(name, ctx, getattr(node, "lineno", None), _depth)
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
            elif kind == "value" and type(target) is ast.Call:
                q = self._dynamic_import(target, b_ctx, depth)
            elif kind == "param" and target is not None:
                q = self._param_aliases.get((id(target), name))  # bound to an import at every call (params.py)
            else:
                return None
            if q is None or (result is not None and q != result):
                return None
            result = q
        return result

    def _dynamic_import(self, call, ctx, depth) -> str | None:
        """The module ``importlib.import_module("m")`` / ``__import__("m")`` returns, when the
        callee really is importlib's (or the builtin ``__import__``)."""
        name = dynamic_import_name(call)
        if name is None:
            return None
        f = call.func
        if type(f) is ast.Name and f.id == "__import__":
            return name if self.lookup("__import__", ctx, getattr(f, "lineno", None)) is None else None
        return name if self.qualname(f, ctx, depth + 1) == "importlib.import_module" else None

    def call_name(self, call: ast.Call, ctx: Ctx) -> str | None:
        """Qualified name of what a call calls (cached per call node)."""
        cache = self._call_names  # its own dict: the hottest query of every rule
        key = id(call)
        found = cache.get(key, _MISSING)
        if found is _MISSING:
            f = call.func  # a chain's name is shared with the attribute index (references)
            found = cache[key] = self._attr_qualname(f, ctx) if type(f) is ast.Attribute else self.qualname(f, ctx)
        return found

    def call_index(self) -> dict[str, list[tuple[ast.Call, Ctx]]]:
        """Every call whose callee resolves, by qualified name: ``{qualname: [(call, ctx),
        ...]}``, each list in walk order. Built once (one ``call_name`` per call)."""
        index = self._cache.get("calls_index")
        if index is None:
            index = {}
            resolvable = self.resolvable
            for rec in self.calls:
                root = rec[0].func
                while type(root) is ast.Attribute:
                    root = root.value
                if type(root) is not ast.Name or root.id not in resolvable:
                    continue  # len(x), self.f(), f()(): no import names the callee
                q = self.call_name(rec[0], rec[1])
                if q is not None:
                    recs = index.get(q)
                    if recs is None:
                        index[q] = [rec]
                    else:
                        recs.append(rec)
            self._cache["calls_index"] = index
        return index

    def calls_to(self, *qualnames: str) -> list[tuple[ast.Call, Ctx]]:
        """Every call (with its context) whose callee resolves to one of ``qualnames``, in
        source order."""
        index = self.call_index()
        out = []
        for q in qualnames:
            out.extend(index.get(q, ()))
        if len(out) > 1:
            out.sort(key=_position)
        return out

    def calls_with_prefix(self, prefix: str) -> list[tuple[ast.Call, Ctx]]:
        return [rec for q, recs in self.call_index().items() if q.startswith(prefix) for rec in recs]

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
            found: dict[str, list] = {}
            resolvable = self.resolvable
            for node, ctx, root in self.attrs:
                if root not in resolvable:
                    continue  # self.x, a local, a parameter: resolves to nothing
                q = self._attr_qualname(node, ctx)
                if q is not None:
                    found.setdefault(q, []).append((node, ctx))
            index = self._cache["attr_index"] = (found, sorted(found))
        found, names = index
        # the qualnames under `prefix` are `prefix` itself and one sorted run of `prefix.*`
        # ('/' follows '.'), or the run of `prefix*` for a prefix ending in "."
        start = prefix if prefix.endswith(".") else prefix + "."
        stop = start[:-1] + "/"
        out = [(node, prefix, ctx) for node, ctx in found.get(prefix, ())] if start != prefix else []
        for q in names[bisect.bisect_left(names, start):bisect.bisect_left(names, stop)]:
            out.extend((node, q, ctx) for node, ctx in found[q])
        for node, alias, full, ctx in self.import_froms:
            q = canonical(full)
            if q == prefix or q.startswith(start):
                out.append((alias if hasattr(alias, "lineno") else node, q, ctx))
        for node, ctx in self.star_uses:  # a star-imported name is reported where it is read
            q = self._attr_qualname(node, ctx)
            if q is not None and (q == prefix or q.startswith(start)):
                out.append((node, q, ctx))
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
        """``qualname`` of an attribute chain (or a star-imported name), memoised per node."""
        cache = self._chain_names
        found = cache.get(id(node), _MISSING)
        if found is _MISSING:
            found = cache[id(node)] = self.qualname(node, ctx)
        return found

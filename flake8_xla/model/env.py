"""Environment access: reads, membership tests and writes of ``os.environ`` in every
spelling, and whether the module looks launched by torchrun rather than by the XLA launcher.
"""

from __future__ import annotations

import ast

from .scopes import UNKNOWN, Ctx


class Environment:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def torchrun_hints(self) -> bool:
        """True when the module looks launched by torchrun (elastic), not by the XLA launcher."""
        if "torchrun" in self._cache:
            return self._cache["torchrun"]
        # only hints in XLA-on code count: a LOCAL_RANK read in the GPU branch of a dual-launch
        # script says how the GPU path starts, not the XLA one
        hint = any(not self.is_xla_off(ctx) for _, ctx in self.calls_to(
            "torch.distributed.is_torchelastic_launched",
            "torch.distributed.elastic.utils.distributed.is_torchelastic_launched"))
        if not hint:
            hint = any((n == "torch.distributed.run" or n.startswith("torch.distributed.elastic"))
                       and not self.is_xla_off(ctx) for _, _, n, ctx in self.imports + self.import_froms)
        if not hint:
            for key, node, ctx in self.env_reads() + self.env_tests():
                if key in ("LOCAL_RANK", "RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID") \
                        and not (ctx.func is not None and id(ctx.func) in self.launched()) \
                        and not self.is_xla_off(ctx):
                    hint = True
                    break
        self._cache["torchrun"] = hint
        return hint

    def env_reads(self) -> list[tuple[str, ast.AST, Ctx]]:
        """Reads of environment variables: ``os.environ[k]``, ``.get(k)``, ``os.getenv(k)``, ``k in os.environ``."""
        if "env_reads" in self._cache:
            return self._cache["env_reads"]
        out = []
        for node, ctx in self.subscript_loads if self._names_environ() else ():
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
        for node, ctx in self.compares if self._names_environ() else ():
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
        for target, value, ctx in self.subscript_stores if self._names_environ() else ():
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
                    out += self._dict_entries(arg, ctx)
            out += _keyword_entries(call, ctx)
        out += self._child_env_writes()
        out.sort(key=lambda r: (r[1].lineno, r[1].col_offset))
        self._cache["env_writes"] = out
        return out

    def _dict_entries(self, node: ast.Dict, ctx) -> list:
        """``(key, key node, value, ctx)`` for each literal string key of a dict display."""
        out = []
        for k, v in zip(node.keys, node.values):
            key = self.const(k, ctx) if k is not None else UNKNOWN
            if isinstance(key, str):
                out.append((key, k, v, ctx))
        return out

    def _is_environ_copy(self, expr, ctx) -> bool:
        """``os.environ.copy()``, ``dict(os.environ)``, ``copy.copy(os.environ)``, ``os.environ``
        itself: a mapping that starts as the environment (for a child process)."""
        if type(expr) is ast.Call:
            q = self.call_name(expr, ctx)
            if q == "os.environ.copy":
                return True
            if (q == "copy.copy" or (type(expr.func) is ast.Name and expr.func.id == "dict"
                                     and self.lookup("dict", ctx, None) is None)) and expr.args:
                return self.qualname(expr.args[0], ctx) == "os.environ"
        return False

    def _names_environ(self) -> bool:
        """The module names ``os.environ`` somewhere: an attribute chain or an import
        resolving to it or under it. Without one, no expression resolves to ``os.environ``
        (a name does so only through such a chain or import), so the scans of subscripts,
        tests and environment copies are skipped."""
        found = self._cache.get("names_environ")
        if found is None:
            found = self._cache["names_environ"] = bool(
                self.references("os.environ") or self.import_refs("os.environ"))
        return found

    def _environ_copies(self) -> list:
        """``(call, ctx)`` of every call that copies the environment (:meth:`_is_environ_copy`),
        memoised. Each spelling names ``os.environ`` (:meth:`_names_environ`); the candidates
        come from the call index (``os.environ.copy``, ``copy.copy``) and the calls of ``dict``
        in the functions that read that name."""
        found = self._cache.get("environ_copies")
        if found is None:
            found = []
            if self._names_environ():
                candidates = self.calls_to("os.environ.copy", "copy.copy")
                # `dict(...)` calls: only in the functions (or module level) that read `dict`
                for func in {id(c.func): c.func for c in self.name_loads.get("dict", ())}.values():
                    candidates += [(c, x) for c, x in (func.calls if func is not None else self._module_calls())
                                   if type(c.func) is ast.Name and c.func.id == "dict" and c.args]
                seen: set[int] = set()
                for call, ctx in candidates:
                    if id(call) not in seen and self._is_environ_copy(call, ctx):
                        seen.add(id(call))
                        found.append((call, ctx))
            self._cache["environ_copies"] = found
        return found

    def _child_env_writes(self) -> list:
        """Variables set in an environment built for a child process: ``env =
        os.environ.copy(); env["K"] = v``, ``{**os.environ, "K": v}``, ``dict(os.environ, K=v)``
        (a launcher passes them to ``subprocess.run(..., env=env)``). Memoised."""
        found = self._cache.get("child_env_writes")
        if found is not None:
            return found
        out = []
        copies = self._environ_copies()
        if copies:
            for target, value, ctx in self.subscript_stores:
                base = target.value
                if type(base) is ast.Name:
                    values = self.values(base, ctx)
                    if values and all(self._is_environ_copy(v, c) for v, c in values):
                        key = self.const(target.slice, ctx)
                        if isinstance(key, str):
                            out.append((key, target, value, ctx))
        for node, ctx in self.unpacking_dicts:
            if any(k is None and self.qualname(v, ctx) == "os.environ" for k, v in zip(node.keys, node.values)):
                out += self._dict_entries(node, ctx)
        for call, ctx in copies:
            if call.keywords:
                out += _keyword_entries(call, ctx)
        self._cache["child_env_writes"] = out
        return out


def _keyword_entries(call: ast.Call, ctx) -> list:
    """``(name, keyword node, value, ctx)`` for each ``name=value`` keyword of a call."""
    return [(kw.arg, kw, kw.value, ctx) for kw in call.keywords if kw.arg is not None]

"""Calls the user names in the options: in-house gradient reducers (``xla-reducing-calls``)
and launch wrappers (``xla-launchers``), see :class:`~flake8_xla.settings.Settings`."""

from __future__ import annotations

import ast

from .scopes import Ctx


class UserNames:
    """Mixin of :class:`~flake8_xla.model.Model`; see the module docstring."""

    def calls_named(self, names: tuple[str, ...]) -> list[tuple[ast.Call, Ctx]]:
        """Calls matching one of ``names``: a dotted name matches a call whose callee resolves
        to it through imports (``mylib.dist.sync_grads``); a bare name (``sync_grads``) matches
        any call of that name, ``f(...)``, ``obj.f(...)`` or an imported ``f`` under an alias.
        One pass over the calls per list, memoised; nothing when ``names`` is empty."""
        if not names:
            return []
        key = ("calls_named", names)
        found = self._cache.get(key)
        if found is None:
            dotted = {n for n in names if "." in n}
            bare = {n for n in names if "." not in n}
            found = []
            for call, ctx in self.calls:
                q = self.call_name(call, ctx)
                f = call.func
                last = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else None
                if (q is not None and (q in dotted or q.rsplit(".", 1)[-1] in bare)) or last in bare:
                    found.append((call, ctx))
            self._cache[key] = found
        return found

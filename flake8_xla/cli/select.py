"""Which findings the CLI reports: flake8's own decision (its ``DecisionEngine``), so
``select``, ``ignore``, their ``extend-`` forms and ``per-file-ignores`` mean what they mean
under flake8 (the longest matching prefix wins; an explicit select beats a default ignore).

What the plugin registers with flake8 is the default here too: ``XLA`` selected, and the
hint-level rules (``hint = True`` on the rule class) ignored until XLA is selected
explicitly. A file that cannot be read or parsed (``E902`` / ``E999``) is always reported,
unless one of the ignore options names that code: the CLI never passes a file it did not lint.
"""

from __future__ import annotations

import argparse
from functools import lru_cache

from flake8.style_guide import Decision, DecisionEngine

from ..registry import all_rules
from .files import matches

ALWAYS = ("E902", "E999")


def hint_codes() -> list[str]:
    return sorted(code for code, cls in all_rules().items() if getattr(cls, "hint", False))


class Selector:
    """``reported(path, code)`` for one run's options."""

    def __init__(self, select=None, ignore=None, extend_select=(), extend_ignore=(), per_file_ignores=()):
        self.select = list(select) if select is not None else None
        self.ignore = list(ignore) if ignore is not None else None
        self.extend_select = list(extend_select or ())
        self.extend_ignore = list(extend_ignore or ())
        self.per_file = list(per_file_ignores or ())
        self._for_path = lru_cache(maxsize=None)(self._extra_ignores)
        self._engine = lru_cache(maxsize=None)(self._make_engine)

    def _extra_ignores(self, path: str) -> tuple[str, ...]:
        # flake8 (StyleGuideManager.style_guide_for): of the per-file-ignores patterns that
        # match, the longest one applies
        best = None
        for pattern, codes in self.per_file:
            if matches(path, [pattern]) and (best is None or len(pattern) > len(best[0])):
                best = (pattern, codes)
        return tuple(best[1]) if best else ()

    def _make_engine(self, extra: tuple[str, ...]) -> DecisionEngine:
        return DecisionEngine(argparse.Namespace(
            select=self.select, ignore=self.ignore, extend_select=self.extend_select,
            extend_ignore=self.extend_ignore + list(extra),
            extended_default_select=["XLA"], extended_default_ignore=hint_codes()))

    def unreported(self) -> tuple[str, ...]:
        """The rule codes these options leave out, per-file-ignores aside (for
        ``Settings.unreported``: a rule not reported supersedes nothing)."""
        return tuple(code for code in sorted(all_rules()) if not self.reported("", code))

    def reported(self, path: str, code: str) -> bool:
        extra = self._for_path(path)
        if code in ALWAYS:
            explicit = (self.ignore or []) + self.extend_ignore + list(extra)
            return not any(code.startswith(prefix) for prefix in explicit)
        return self._engine(extra).decision_for(code) is Decision.Selected

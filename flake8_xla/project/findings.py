"""A linted module's final findings in project mode, kept on disk (as Ruff keeps its diagnostics).

A module's findings are a function of its text, the run's settings (all of them: the host's
unreported codes change which finding supersedes which), the rules that run, the Python
version (its parser) and the project's files: the inputs of a summary's key
(:func:`.cache.key`) plus those. A warm run of an unchanged project reads one small entry for
each module that needs the walk and does no analysis for it at all: no project facts, no model,
no rules.

Asked only for a module that needs the walk (:func:`flake8_xla.engine.needs_walk`): a module of
the fast path costs what it costs in single-file mode and never touches the cache. An entry is
written only for a module whose text is the file's (not an unsaved editor buffer: a new entry
per edit) and only when no rule failed (an ``XLA000`` finding may depend on the stack's depth,
not the module). Any error reads as no entry; nothing here raises.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from . import cache


class ModuleFindings:
    """The findings entry of one linted module: :meth:`get` the stored findings (or ``None``),
    :meth:`put` the findings the rules gave."""

    def __init__(self, path: Path, files, settings, source: str, rules: tuple[str, ...]) -> None:
        self._where: Path | None = None
        self._entry = ""
        self._storable = False
        data = source.encode("utf-8", "surrogatepass")
        where = cache.folder(files.root)
        if where is None:
            return
        project = cache.project_digest(files.root, files.files(), files.data)
        digest = hashlib.sha256(data).digest()
        extra = ("findings", rules, repr(settings), sys.version_info[:2])
        self._entry = cache.key(path, data, settings, project, extra, digest)
        self._storable = _file_text(path, files, digest)
        self._where = where

    def get(self) -> tuple | None:
        """The stored findings as ``(line, col, code, message, end, covers)`` tuples, or ``None``."""
        if self._where is None:
            return None
        found = cache.load_findings(self._where, self._entry)
        return None if found is cache.MISSING else found

    def put(self, findings) -> None:
        """Keep the module's final findings (:class:`~flake8_xla.registry.Finding` each) when
        its text is the file's and no rule failed."""
        if self._where is None or not self._storable or any(f.code == "XLA000" for f in findings):
            return
        cache.store_findings(self._where, self._entry,
                             [(f.line, f.col, f.code, f.message, f.end, f.covers) for f in findings])


def _file_text(path: Path, files, digest: bytes) -> bool:
    """The text whose UTF-8 bytes have SHA-256 ``digest`` is the file's at ``path`` as the
    project digest read it: its bytes, or its bytes with ``\r\n`` and ``\r`` read as ``\n``
    (a host reads a file with universal newlines: a module with Windows line ends)."""
    own = cache.file_digest(path)
    if own is None:
        return False
    if own == digest:
        return True
    raw = files.data(path)
    if raw is None or b"\r" not in raw or hashlib.sha256(raw).digest() != own:
        return False
    return hashlib.sha256(raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")).digest() == digest


def module_findings(path: Path, files, settings, source: str | None, rules: tuple[str, ...]) -> ModuleFindings | None:
    """The findings entry of the module at ``path`` (resolved) of project ``files`` linted with
    ``settings`` from text ``source`` by the rules named ``rules``; ``None`` when the cache is
    off or the text is not known."""
    if settings.cache != "on" or source is None:
        return None
    return ModuleFindings(path, files, settings, source, rules)

"""A linted module's answers to the project questions its rules ask most, kept on disk.

Project mode asks, for every call of a module, what the project functions it may run do
(:meth:`~flake8_xla.model.calls.Calls.callee_helpers`): which calls run a training step
through another module's helper (the step markers), which run ``xm.save`` there (XLA602's
helper saves), and for each function which calls of other modules run it once per step
(:meth:`~flake8_xla.model.params.Params.project_step_calls`). The answers are a function
of the module's text, the run's settings, the rules that run (the order they ask in) and
the project's files: the same inputs as a summary's, so they are kept in the same cache
folder under a key of the same kind (:func:`.cache.key`, with the module's text and the
rule codes): a warm run of an unchanged project reads one small entry per module instead of
asking again.

The answers name the module's own calls and functions by their index in the model's walk
(:attr:`~flake8_xla.model.Model.calls`, :attr:`~flake8_xla.model.Model.functions`): the
same text gives the same walk. An entry is written only for a module whose text is the
file's (not an unsaved editor buffer: its answers would be a new entry per edit), and read
lazily, at the first question. Any error reads as no entry; nothing here raises.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from . import cache

_MISSING = cache.MISSING

#: entry key -> its answers, read or written in this process (a second lint of the same text
#: in one process, as the benchmark's loops and the language server do, reads no file)
_MEMO: dict[str, dict] = {}


def clear() -> None:
    _MEMO.clear()


class ModuleAnswers:
    """The answers of one linted module (see the module's docstring): :meth:`get` one,
    :meth:`put` one computed, :meth:`flush` when the rules are done. The entry's key is
    computed, and the entry read, at the first question."""

    def __init__(self, path: Path, files, settings, source: str, codes: tuple[str, ...]) -> None:
        self._args = (path, files, settings, source, codes)
        self._where: Path | None = None
        self._entry = ""
        self._storable = False
        self._got: dict | None = None
        self._new = False

    def _answers(self) -> dict:
        if self._got is None:
            self._got = {}
            try:
                self._open()
            except (Exception, RecursionError):  # no key, no entry: every answer is computed
                self._where = None
        return self._got

    def _open(self) -> None:
        path, files, settings, source, codes = self._args
        where = cache.folder(files.root)
        if where is None:
            return
        data = source.encode("utf-8", "surrogatepass")
        project = cache.project_digest(files.root, files.files(), files.data)
        digest = hashlib.sha256(data).digest()
        entry = cache.key(path, data, settings, project, ("answers", codes), digest)
        own = cache.file_digest(path)
        self._storable = own is not None and own == digest
        found = _MEMO.get(entry)
        if found is None:
            found = cache.load_answers(where, entry)
            found = {} if found is _MISSING else found
            if len(_MEMO) >= MAX_MEMO:
                _MEMO.clear()
            _MEMO[entry] = found
        self._where, self._entry, self._got = where, entry, found

    def get(self, name: str):
        """The stored answer ``name``, or :data:`MISSING`."""
        return self._answers().get(name, _MISSING)

    def put(self, name: str, value) -> None:
        """Keep answer ``name`` (computed: :meth:`get` had none); a value an entry cannot
        hold (:func:`.cache.encodable`) is not kept."""
        if cache.encodable(value):
            self._answers()[name] = value
            self._new = True

    def flush(self) -> None:
        """Write the entry when this run added answers (and the text is the file's)."""
        if self._new and self._storable and self._where is not None:
            cache.store_answers(self._where, self._entry, self._got)
        self._new = False


#: how many entries :data:`_MEMO` keeps before it starts again (a language server's edits)
MAX_MEMO = 4096


def module_answers(path: Path, files, settings, source: str | None, codes: tuple[str, ...]) -> ModuleAnswers | None:
    """The answers store of the module at ``path`` (resolved) of project ``files`` linted with
    ``settings`` (the model's: launch wrappers added) from text ``source`` by the rules
    ``codes``; ``None`` when the cache is off or the text is not known."""
    if settings.cache != "on" or source is None:
        return None
    return ModuleAnswers(path, files, settings, source, codes)

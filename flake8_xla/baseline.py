"""Baselines: accept today's findings, report only new ones (``--write-baseline`` /
``--baseline`` in the CLI, option ``xla-baseline`` in every host).

A baseline is a JSON file::

    {
      "version": 1,
      "tool": "flake8-xla",
      "findings": [
        {"path": "src/train.py", "code": "XLA101", "line": "return DDP(model)", "count": 2}
      ]
    }

Each finding is keyed by its file's path (relative to the project root, ``/``-separated),
its code and the text of its line with the surrounding white space stripped -- not the line
number, so an edit elsewhere in the file does not bring it back -- and ``count`` says how
many findings share that key (two equal lines with the same finding are both recorded).
Entries are sorted by (path, code, line), so the file diffs well. The project root is the
one project mode finds from the baseline file's folder (the nearest folder up holding
``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git``): keep the baseline in the
project, and the keys do not depend on the folder you run from.

When a file is linted, its findings are matched in line order: the first ``count`` findings
with a key are old (not reported), any more are new. A file that cannot be read or parsed
(``E902``, ``E999``) and an internal error (``XLA000``) are never recorded nor hidden.
"""

from __future__ import annotations

import collections
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence, TypeVar

from .settings import SettingsError

VERSION = 1
TOOL = "flake8-xla"
#: codes a baseline never records nor hides: a file that was not linted, a rule that failed
NEVER = ("E902", "E999", "XLA000")

T = TypeVar("T")


def project_root(folder: Path) -> Path:
    """The project root the keys are relative to: project mode's, from ``folder``."""
    from .project.files import root_from

    return root_from(folder)


@dataclass
class Baseline:
    """The accepted findings: ``counts[(path, code, line_text)]`` and the root ``path`` is
    relative to."""

    root: Path
    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def key_path(self, path: str) -> str:
        """``path`` (relative to the current folder, or absolute) as a key: relative to the
        root, ``/``-separated."""
        absolute = os.path.abspath(path)
        try:
            rel = os.path.relpath(absolute, self.root)
        except ValueError:  # another drive (Windows)
            return Path(absolute).as_posix()
        return Path(rel).as_posix()

    def new(self, path: str, findings: Iterable[T], line_text: Callable[[T], str],
            code: Callable[[T], str] = lambda f: f.code) -> list[T]:
        """The findings of the file at ``path`` that the baseline does not cover, in their order
        (give them in line order: the first ``count`` of a key are the old ones).
        ``line_text(finding)`` is the text of its line, ``code(finding)`` its code."""
        left: dict[tuple[str, str, str], int] = {}
        rel = self.key_path(path)
        out = []
        for finding in findings:
            c = code(finding)
            if c in NEVER:
                out.append(finding)
                continue
            key = (rel, c, line_text(finding).strip())
            n = left.get(key, self.counts.get(key, 0))
            if n > 0:
                left[key] = n - 1
            else:
                left[key] = 0
                out.append(finding)
        return out


def entries(baseline_file: Path, findings: Iterable[tuple[str, str, str]]) -> dict:
    """The baseline document for ``findings``, each ``(path, code, line text)``, keyed
    relative to the root found from ``baseline_file``'s folder."""
    root = project_root(Path(os.path.abspath(baseline_file)).parent)
    base = Baseline(root)
    counts = collections.Counter((base.key_path(path), code, text.strip())
                                 for path, code, text in findings if code not in NEVER)
    return {
        "version": VERSION,
        "tool": TOOL,
        "findings": [{"path": p, "code": c, "line": t, "count": n} for (p, c, t), n in sorted(counts.items())],
    }


def dumps(document: dict) -> bytes:
    """The baseline file's bytes: 2-space indented JSON, non-ASCII kept, a final newline."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


_CACHE: dict[tuple, Baseline] = {}


def load(path: str | os.PathLike, label: str = "option --xla-baseline") -> Baseline:
    """The baseline in the file at ``path`` (cached while the file is unchanged). Raises
    :class:`SettingsError`, one line starting with ``label``, when the file cannot be read,
    is not JSON or not a flake8-xla baseline of this version."""
    file = Path(os.path.abspath(path))
    try:
        st = file.stat()
        key = (file, st.st_mtime_ns, st.st_size)
        if key in _CACHE:
            return _CACHE[key]
        data = file.read_bytes()
    except OSError as exc:
        raise SettingsError(f"{label}: cannot read {path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsError(f"{label}: {path} is not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(doc, dict) or doc.get("tool") != TOOL or not isinstance(doc.get("findings"), list):
        raise SettingsError(f"{label}: {path} is not a flake8-xla baseline (write one with --write-baseline)")
    if doc.get("version") != VERSION:
        raise SettingsError(f"{label}: {path} has baseline version {doc.get('version')!r}; this flake8-xla "
                            f"reads version {VERSION} (write it again with --write-baseline)")
    counts: dict[tuple[str, str, str], int] = {}
    for i, entry in enumerate(doc["findings"]):
        ok = isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("path", "code", "line")) \
            and isinstance(entry.get("count"), int) and not isinstance(entry.get("count"), bool) and entry["count"] > 0
        if not ok:
            raise SettingsError(f"{label}: {path}: findings[{i}] needs path, code and line (strings) and "
                                f"count (a positive integer)")
        k = (entry["path"], entry["code"], entry["line"].strip())
        counts[k] = counts.get(k, 0) + entry["count"]
    baseline = Baseline(project_root(file.parent), counts)
    _CACHE[key] = baseline
    return baseline


def parse_option(value: object, option: str = "--xla-baseline") -> str:
    """Validate the ``xla-baseline`` option: the file must load (:func:`load`). Returns the
    path as given; raises :class:`SettingsError` (one line) otherwise."""
    text = str(value).strip()
    load(text, f"option {option}" if option.startswith("--") else option)
    return text


def for_settings(settings) -> Baseline | None:
    """The baseline ``settings.baseline`` names, or ``None``. Raises :class:`SettingsError`
    when it cannot be loaded (it was checked when the settings were made; it may have changed)."""
    path = getattr(settings, "baseline", None)
    return load(path) if path else None


def filter_lines(settings, path: str, findings: Sequence[T], lines: Sequence[str] | None) -> list[T]:
    """For the flake8 and pylint adapters: the engine's ``findings`` for the file at ``path``
    (with its source ``lines``) that the configured baseline does not cover; all of them
    without a baseline."""
    baseline = for_settings(settings)
    if baseline is None:
        return list(findings)
    lines = lines or []

    def text(f) -> str:
        return lines[f.line - 1] if 1 <= f.line <= len(lines) else ""

    return baseline.new(path, findings, text)  # the engine's order: by line

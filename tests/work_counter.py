"""Count the engine's work on a source text: lines of flake8_xla code executed.

A deterministic measure (no clocks): ``sys.settrace`` counts every line the engine runs
in the package's own files. Used by tests/test_linear.py to show that doubling a
generated input at most doubles the work.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from flake8_xla import engine
from flake8_xla.settings import build

PACKAGE = str(Path(engine.__file__).resolve().parent)


class LineCounter:
    """``with LineCounter(prefix) as c:`` counts in ``c.count`` the lines executed in files
    whose path starts with ``prefix`` (default: the flake8_xla package)."""

    def __init__(self, prefix: str = PACKAGE):
        self.prefix = prefix
        self.count = 0

    def _local(self, frame, event, arg):
        if event == "line":
            self.count += 1
        return self._local

    def _global(self, frame, event, arg):
        return self._local if frame.f_code.co_filename.startswith(self.prefix) else None

    def __enter__(self) -> "LineCounter":
        self._old = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(self._old)


def engine_work(source: str, scope: str | None = None) -> tuple[int, list]:
    """(lines of flake8_xla executed, findings) for one engine run over ``source``."""
    tree = ast.parse(source)
    with LineCounter() as counter:
        found = engine.run(tree, build(scope), source)
    return counter.count, found


def project_work(paths: list[Path], scope: str | None = None, prefix: str = PACKAGE) -> tuple[int, list]:
    """(lines executed in files under ``prefix``: by default all of flake8_xla; findings)
    linting every file of ``paths`` by its path in project mode, as one process would (the
    project cache cleared first)."""
    from flake8_xla import project

    project.clear_cache()
    sources = [(p, p.read_text(encoding="utf-8")) for p in paths]
    trees = [ast.parse(text) for _, text in sources]
    found = []
    try:
        with LineCounter(prefix) as counter:
            for (path, text), tree in zip(sources, trees):
                found.extend((path.name, f) for f in engine.run(tree, build(scope), text, filename=str(path)))
    finally:
        project.clear_cache()
    return counter.count, found

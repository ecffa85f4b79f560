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


def engine_work(source: str, scope: str | None = None) -> tuple[int, list]:
    """(lines of flake8_xla executed, findings) for one engine run over ``source``."""
    tree = ast.parse(source)
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    old = sys.gettrace()
    sys.settrace(global_)
    try:
        found = engine.run(tree, build(scope), source)
    finally:
        sys.settrace(old)
    return count, found


def project_work(paths: list[Path], scope: str | None = None) -> tuple[int, list]:
    """(lines of flake8_xla executed, findings) linting every file of ``paths`` by its path in
    project mode, as one process would (the project cache cleared first)."""
    from flake8_xla import project

    project.clear_cache()
    sources = [(p, p.read_text(encoding="utf-8")) for p in paths]
    trees = [ast.parse(text) for _, text in sources]
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    found = []
    old = sys.gettrace()
    sys.settrace(global_)
    try:
        for (path, text), tree in zip(sources, trees):
            found.extend((path.name, f) for f in engine.run(tree, build(scope), text, filename=str(path)))
    finally:
        sys.settrace(old)
        project.clear_cache()
    return count, found

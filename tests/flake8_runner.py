"""Run real flake8 in a subprocess and collect its XLA findings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FORMAT = "%(path)s\t%(row)d\t%(col)d\t%(code)s"


def flake8(paths: list[Path], flags: list[str] = (), cwd: Path | None = None, extra: list[str] = ()) -> dict[Path, set]:
    """``{path: {(line, col, code)}}`` for every XLA finding flake8 reports (``--isolated``);
    paths are resolved from ``cwd`` (flake8's working directory) when it is given."""
    base = Path(cwd) if cwd is not None else Path()  # relative paths are flake8's, from cwd
    results: dict[Path, set] = {(base / p).resolve(): set() for p in paths}
    if not paths:
        return results
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select=XLA", f"--format={FORMAT}", *extra,
           *flags, *map(str, paths)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=300)
    if proc.returncode not in (0, 1) or proc.stderr.strip():
        raise AssertionError(f"flake8 failed ({proc.returncode}): {proc.stderr}\n{proc.stdout}")
    for line in proc.stdout.splitlines():
        path, row, col, code = line.split("\t")
        results.setdefault((base / path).resolve(), set()).add((int(row), int(col), code))
    return results

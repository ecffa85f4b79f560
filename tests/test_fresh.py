"""Fresh material written blind in sessions 10 to 17 (``tests/fresh/``: eighty-one multi-file
projects and 64 single files, 40 of them 20 bug-report pairs), through real flake8,
as a ratchet over ``tests/fresh_pending.py``: every mark not pending holds, every pending mark
still does not (a fix fails this test until its row is removed), and nothing unmarked is
reported. Each single file is its own project (a ``pyproject.toml`` beside it), linted in one
flake8 run; each project is run from its root on all its files (and, in the slow set, each
file alone, which must give the same findings)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from annotations import parse_case
from flake8_runner import flake8
from fresh_pending import CASES, PROJECTS

FRESH = Path(__file__).resolve().parent / "fresh"
PROJECT_NAMES = sorted(p.parent.name for p in (FRESH / "projects").glob("*/PROJECT"))
CASE_FILES = sorted((FRESH / "cases").glob("*/*.py"))


def _py_files(project: Path) -> list[Path]:
    return sorted(p.relative_to(project) for p in project.rglob("*.py") if "__pycache__" not in p.parts)


@functools.lru_cache(maxsize=None)
def _project_run(name: str) -> tuple[dict, dict]:
    """(expected, found) as ``{relative path: {(line, code)}}`` for project ``name``."""
    project = FRESH / "projects" / name
    files = _py_files(project)
    found = flake8(files, cwd=project)
    expected = {str(rel): parse_case(project / rel).expected["default"] for rel in files}
    got = {str(p.relative_to(project.resolve())): {(line, code) for line, _, code in v} for p, v in found.items()}
    return expected, got


def _ratchet(expected: dict, got: dict, pending: dict) -> None:
    marks = {(rel, line, code): (line, code) in got.get(rel, set()) for rel, e in expected.items() for line, code in e}
    unknown = set(pending) - set(marks)
    assert not unknown, f"pending rows that are no mark: {sorted(unknown)}"
    missing = sorted(k for k, holds in marks.items() if not holds and k not in pending)
    now_hold = sorted(k for k, holds in marks.items() if holds and k in pending)
    extra = sorted((rel, line, code) for rel, g in got.items() for line, code in g
                   if (line, code) not in expected.get(rel, set()))
    assert not missing, f"marks that no longer hold: {missing}"
    assert not now_hold, f"marks now hold, remove them from tests/fresh_pending.py: {now_hold}"
    assert not extra, f"unmarked findings (false positives): {extra}"


@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_fresh_project_ratchet(name):
    expected, got = _project_run(name)
    _ratchet(expected, got, {k[1:]: why for k, why in PROJECTS.items() if k[0] == name})


@pytest.mark.slow
@pytest.mark.parametrize("name", PROJECT_NAMES)
def test_fresh_project_alone_same_as_together(name):
    project = FRESH / "projects" / name
    _, together = _project_run(name)
    for rel in _py_files(project):
        alone = flake8([rel], cwd=project)
        assert {(line, code) for v in alone.values() for line, _, code in v} == together.get(str(rel), set()), rel


def test_fresh_single_files_ratchet():
    assert len(CASE_FILES) == 64  # 44 of session 10, 20 of session 11 (s17-s24, p15-p20 pairs)
    found = flake8(CASE_FILES)
    expected = {f.parent.name: parse_case(f).expected["default"] for f in CASE_FILES}
    got = {p.parent.name: {(line, code) for line, _, code in v} for p, v in found.items()}
    _ratchet(expected, got, CASES)
    # the documented fix of every bug-report pair gives no finding at all
    assert not any(got[name] for name in expected if name.endswith("_fixed"))

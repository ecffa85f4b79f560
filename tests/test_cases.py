"""Every handed case through real flake8, once per variant, and again with noqa: silence.

Cases come from ``tests/cases`` (copies kept in the repo) and, when present,
``../shared/cases`` (where new cases arrive); a case in both places must be identical.
"""

from __future__ import annotations

import functools
import shlex
import sys
from pathlib import Path

import pytest

from annotations import case_to_noqa, parse_case
from flake8_runner import flake8

from flake8_xla.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
LOCAL = ROOT / "tests" / "cases"
SHARED = ROOT.parent / "shared" / "cases"


def _case_paths() -> list[Path]:
    paths = {p.name: p for p in sorted(LOCAL.glob("*.py"))}
    if SHARED.is_dir():
        for p in sorted(SHARED.glob("*.py")):
            if p.name not in paths or p.read_bytes() != paths[p.name].read_bytes():
                paths[p.name if p.name not in paths else f"shared/{p.name}"] = p
    return list(paths.values())


CASES = [parse_case(p) for p in _case_paths()]
RUNS = [(case, name) for case in CASES for name in case.variants]


def expected(case, name: str) -> set[tuple[int, str]]:
    """The (line, code) findings variant ``name`` must give, for the codes a rule exists for.

    A line marked with a code no rule has yet waits for the issue that builds that code;
    the file still runs, and every other code on it must be exact.
    """
    built = set(all_rules())
    return {e for e in case.expected[name] if e[1] in built}


def _runnable(case) -> bool:
    return case.requires is None or sys.version_info[:2] >= case.requires


@functools.lru_cache(maxsize=None)
def _results(noqa: bool, tmp: str) -> dict:
    """Run flake8 once per distinct flag set over every case that declares it. Each case is a
    single-file script: it is linted from a copy in a folder of the cases alone, a project of
    its own (a ``pyproject.toml`` there), as a user lints a script in its own folder; in place,
    project mode would read this repository's other modules as the case's project."""
    groups: dict[tuple, list] = {}
    for case, name in RUNS:
        if _runnable(case):
            groups.setdefault(tuple(case.variants[name]), []).append(case)
    folder = Path(tmp) / ("noqa" if noqa else "cases")
    folder.mkdir(exist_ok=True)
    (folder / "pyproject.toml").write_text("", encoding="utf-8")
    out = {}
    for flags, cases in groups.items():
        paths = []
        for case in cases:
            target = folder / f"{abs(hash(str(case.path)))}_{case.path.name}"
            text = case.path.read_text(encoding="utf-8")
            target.write_text(case_to_noqa(text) if noqa else text, encoding="utf-8")
            paths.append((case, target))
        found = flake8([t for _, t in paths], list(flags))
        for case, target in paths:
            out[(str(case.path), flags)] = {(line, code) for line, _, code in found[target.resolve()]}
    return out


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return str(tmp_path_factory.mktemp("noqa_cases"))


def _id(run):
    case, name = run
    where = "shared" if SHARED in case.path.parents else "local"
    return f"{where}/{case.path.stem}[{name}]"


@pytest.mark.parametrize("run", RUNS, ids=[_id(r) for r in RUNS])
def test_case_findings(run, scratch):
    case, name = run
    if not _runnable(case):
        pytest.skip(f"needs Python {case.requires}")
    got = _results(False, scratch)[(str(case.path), tuple(case.variants[name]))]
    assert sorted(got) == sorted(expected(case, name)), (
        f"flake8 --select=XLA {shlex.join(case.variants[name])} {case.path}"
    )


@pytest.mark.parametrize("run", RUNS, ids=[_id(r) for r in RUNS])
def test_case_noqa_silences(run, scratch):
    case, name = run
    if not _runnable(case):
        pytest.skip(f"needs Python {case.requires}")
    assert _results(True, scratch)[(str(case.path), tuple(case.variants[name]))] == set()


def test_cases_exist():
    assert len(CASES) >= 18


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/cases not present")
def test_local_copies_equal_shared():
    for shared in sorted(SHARED.glob("*.py")):
        local = LOCAL / shared.name
        assert local.exists(), f"copy {shared.name} into tests/cases"
        assert local.read_bytes() == shared.read_bytes(), f"tests/cases/{shared.name} differs from shared"


@pytest.mark.slow  # every case through flake8 twice (~5 s): keeps the default run under its budget
def test_jobs_2_same_as_jobs_1():
    """flake8 -j2 (multiprocessing) gives the same output as -j1 on the handed cases."""
    paths = [c.path for c in CASES if _runnable(c)]
    for flags in ([], ["--xla-scope=always"], ["--xla-version=2.7"]):
        serial = flake8(paths, flags, extra=["-j1"])
        parallel = flake8(paths, flags, extra=["-j2"])
        assert serial == parallel
        assert any(serial.values())

"""Every handed multi-file project (``../shared/projects``, README there) through real flake8.

Each project folder is run from its root two ways, once per variant any of its files
declares: (1) ``flake8 --select=XLA`` on all its ``.py`` files (relative paths), (2) each
file alone by its relative path. A file is scored only in the variants it declares.

The assertion is a ratchet over ``tests/projects_pending.py`` (marks known not to hold yet):
every mark not in the table holds, every mark in the table still does not hold (a fix makes
this test fail until its row is removed), no unmarked finding appears (false positives are
never tabled), and both ways of running give the same findings.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from annotations import parse_case
from flake8_runner import flake8
from projects_pending import PENDING

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "projects"
SKIP_DIRS = {"__pycache__", ".venv", "venv", "build", "dist", "node_modules"}


def _projects() -> list[Path]:
    if not SHARED.is_dir():
        return []
    return sorted(p.parent for p in SHARED.glob("*/PROJECT"))


def project_files(project: Path) -> list[Path]:
    """The project's ``.py`` files, relative to its root, sorted (cache and hidden folders skipped)."""
    out = []
    for path in sorted(project.rglob("*.py")):
        rel = path.relative_to(project)
        if not any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts[:-1]):
            out.append(rel)
    return out


def _variants(project: Path) -> dict[str, list[str]]:
    """Every variant name any file declares -> its flags (``default``: none)."""
    found: dict[str, list[str]] = {"default": []}
    for rel in project_files(project):
        found.update(parse_case(project / rel).variants)
    return found


def _findings(found: dict, project: Path) -> dict[str, set[tuple[int, str]]]:
    return {str(p.relative_to(project.resolve())): {(line, code) for line, _, code in v} for p, v in found.items()}


@functools.lru_cache(maxsize=None)
def run_project(name: str) -> dict:
    """``{variant: (findings of the run on all files, findings of each file alone, expected)}``,
    findings and expectations as ``{relative path: {(line, code)}}`` for the files scored in
    that variant."""
    project = SHARED / name
    files = project_files(project)
    cases = {str(rel): parse_case(project / rel) for rel in files}
    out = {}
    for variant, flags in _variants(project).items():
        scored = [rel for rel in files if variant in cases[str(rel)].variants]
        together = _findings(flake8(files, flags, cwd=project), project)
        alone: dict[str, set] = {}
        for rel in scored:
            alone.update(_findings(flake8([rel], flags, cwd=project), project))
        expected = {str(rel): cases[str(rel)].expected[variant] for rel in scored}
        out[variant] = ({str(r): together.get(str(r), set()) for r in scored}, alone, expected)
    return out


def marks_state(name: str) -> dict:
    """``{(file, variant, line, code): holds}`` for every mark of project ``name``, judged on
    the run on all files, plus the unmarked findings of either run as ``extra``."""
    state, extra = {}, set()
    for variant, (together, alone, expected) in run_project(name).items():
        for rel, marks in expected.items():
            for line, code in marks:
                state[(rel, variant, line, code)] = (line, code) in together[rel]
            for run in (together, alone):
                for line, code in run.get(rel, ()):
                    if (line, code) not in marks:
                        extra.add((rel, variant, line, code))
    return {"marks": state, "extra": extra}


PROJECTS = [p.name for p in _projects()]


@pytest.mark.skipif(not PROJECTS, reason="../shared/projects not present")
@pytest.mark.parametrize("name", PROJECTS)
def test_project_marks_ratchet(name):
    state = marks_state(name)
    pending = {k[1:]: why for k, why in PENDING.items() if k[0] == name}
    unknown = set(pending) - set(state["marks"])
    assert not unknown, f"pending rows that are no mark of {name}: {sorted(unknown)}"
    missing = sorted(k for k, holds in state["marks"].items() if not holds and k not in pending)
    now_hold = sorted(k for k, holds in state["marks"].items() if holds and k in pending)
    assert not missing, f"{name}: marks that no longer hold: {missing}"
    assert not now_hold, f"{name}: marks now hold, remove them from tests/projects_pending.py: {now_hold}"
    assert not state["extra"], f"{name}: unmarked findings (false positives): {sorted(state['extra'])}"


@pytest.mark.skipif(not PROJECTS, reason="../shared/projects not present")
@pytest.mark.parametrize("name", PROJECTS)
def test_project_alone_same_as_together(name):
    """Linting a file alone by its path reads the other modules from the root: same findings."""
    for variant, (together, alone, _) in run_project(name).items():
        for rel in together:
            assert alone.get(rel, set()) == together[rel], f"{name}/{rel}[{variant}]"


@pytest.mark.slow
@pytest.mark.skipif(not PROJECTS, reason="../shared/projects not present")
@pytest.mark.parametrize("name", PROJECTS)
def test_project_same_in_pylint_and_cli(name):
    """pylint and the standalone CLI, run from the root on all files, report what flake8 does."""
    project = SHARED / name
    files = [str(p) for p in project_files(project)]
    for variant, flags in _variants(project).items():
        want = set()
        for rel, found in run_project(name)[variant][0].items():
            want |= {(rel, line, code) for line, code in found}
        scored = set(run_project(name)[variant][0])
        run = lambda cmd: subprocess.run(cmd, capture_output=True, text=True, cwd=project, timeout=600)  # noqa: E731
        cli = run([sys.executable, "-m", "flake8_xla", "--isolated", "--select=XLA", "--format=json", *flags, *files])
        got_cli = {(Path(r["path"]).as_posix(), r["line"], r["code"]) for r in json.loads(cli.stdout or "[]")}
        pylint = run([sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--disable=all",
                      "--enable=xla", "--persistent=n", "--score=n", "--msg-template={path}\t{line}\t{msg}",
                      *flags, *files])
        got_pylint = set()
        for line in pylint.stdout.splitlines():
            if "\t" in line:
                path, row, msg = line.split("\t", 2)
                got_pylint.add((Path(path).as_posix(), int(row), msg.split()[0]))
        for got in (got_cli, got_pylint):
            assert {g for g in got if g[0] in scored} == want, (name, variant)

"""Project mode's on-disk summary cache (flake8_xla/project/cache.py, issue 28 section 2):
computed once, read back on the next run, the same findings cold and warm, never a traceback
from a corrupt, foreign or unwritable cache, never inside the linted tree unless named, off
with ``xla-cache = off`` / ``--no-cache``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_xla import project
from flake8_xla.project import cache, summary
from flake8_xla.settings import Settings
from test_project_mode import lint_all, write
from test_project_overrides_constants import BACKENDS, CUDA, TRAIN, XLA

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "projects"

ENGINE = '''\
import torch


def run(backend, loader, model, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        print(loss.item())
'''

WORKER = TRAIN.replace("    backend.setup()\n", "    backend.setup()\n    run(backend, cfg.loader, cfg.model, cfg.opt)\n") \
    .replace("from backends import get_backend\n", "from backends import get_backend\nfrom engine import run\n")

WANT = {("engine.py", 8, "XLA201"), ("engine.py", 9, "XLA501")}


def _make(base):
    write(base, {"pyproject.toml": "", "backends/__init__.py": BACKENDS, "backends/cuda_backend.py": CUDA,
                 "backends/xla_backend.py": XLA, "train.py": WORKER, "engine.py": ENGINE})


def _cached(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """(the cache folder the run uses, the project) under ``tmp_path``."""
    where = tmp_path / "cache"
    monkeypatch.setenv("FLAKE8_XLA_CACHE_DIR", str(where))
    proj = tmp_path / "p"
    _make(proj)
    return where, proj


def _entries(folder: Path) -> list[Path]:
    """The summary entries (not the linted modules' answers nor findings: tests/test_project_answers.py,
    tests/test_project_findings.py)."""
    return sorted(p for p in folder.rglob("*.json")
                  if not {cache.ANSWERS, cache.FINDINGS, cache.REACH} & set(p.relative_to(folder).parts)) \
        if folder.exists() else []


def _drop_findings(where: Path) -> None:
    """Remove the modules' findings and the reach verdict: a warm run of the same settings
    reads no summary with them (tests/test_project_findings.py); gone, the summaries answer."""
    for kept in (cache.FINDINGS, cache.REACH):
        shutil.rmtree(where / kept, ignore_errors=True)


def test_warm_run_reads_the_summaries_back(tmp_path, monkeypatch):
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj) == WANT
    written = cache.stats()["writes"]
    assert written >= 3 and len(_entries(where)) == written
    _drop_findings(where)
    project.clear_cache()  # a new process: nothing in memory

    def boom(*a, **k):
        raise AssertionError("summarised again on a warm cache")

    monkeypatch.setattr(project, "summarise", boom)
    assert lint_all(proj) == WANT
    assert cache.stats()["misses"] == 0 and cache.stats()["hits"] >= written


def test_a_summary_that_fails_is_kept_as_unknown(tmp_path, monkeypatch):
    """A module whose summary raises is unknown (summary_of: None) in every run; the verdict
    is stored, so the warm run does not build it again; a RecursionError or MemoryError (the
    stack's depth or the memory when asked, not the module's) is not stored."""
    where, proj = _cached(tmp_path, monkeypatch)
    real = project.summarise

    def fails_for_engine(path, *a, **k):
        if path.name == "engine.py":
            raise AttributeError("a bug of the summary")
        return real(path, *a, **k)

    monkeypatch.setattr(project, "summarise", fails_for_engine)
    files = project._project(proj.resolve())
    engine_py = (proj / "engine.py").resolve()
    assert project.summary_of(engine_py, files, Settings()) is None
    assert cache.stats()["writes"] == 1  # (None: the unknown verdict)
    project.clear_cache()

    def boom(*a, **k):
        raise AssertionError("summarised again on a warm cache")

    monkeypatch.setattr(project, "summarise", boom)
    files = project._project(proj.resolve())
    assert project.summary_of(engine_py, files, Settings()) is None
    assert cache.stats() == {"hits": 1, "misses": 0, "writes": 0}
    project.clear_cache()

    for error in (RecursionError, MemoryError):
        def transient(*a, **k):
            raise error

        monkeypatch.setattr(project, "summarise", transient)
        project.clear_cache()
        files = project._project(proj.resolve())
        other = (proj / "train.py").resolve()
        assert project.summary_of(other, files, Settings()) is None
        assert cache.stats()["writes"] == 0


def test_an_edit_anywhere_in_the_project_makes_it_cold(tmp_path, monkeypatch):
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj) == WANT
    project.clear_cache()
    # the launch now selects the CUDA branch: the CUDA backend is XLA code, engine unchanged
    (proj / "train.py").write_text(WORKER.replace("get_backend(cfg.backend)", 'get_backend("cuda")'), encoding="utf-8")
    found = lint_all(proj)
    assert WANT <= found and ("backends/cuda_backend.py", 10, "XLA103") in found
    assert cache.stats()["misses"] > 0


@pytest.mark.parametrize("damage", [
    lambda p: p.write_text("{not json", encoding="utf-8"),
    lambda p: p.write_bytes(b"\x80\x81\x00garbage"),
    lambda p: p.write_text(json.dumps({"format": cache.FORMAT, "key": "someone else's", "summary": None})),
    lambda p: p.write_text(json.dumps({"format": cache.FORMAT, "key": p.stem,
                                       "summary": {"d": "Popen", "args": "rm -rf /"}})),
    lambda p: p.write_text(json.dumps({"format": cache.FORMAT, "key": p.stem,
                                       "summary": {"d": "ModuleSummary", "no_such_field": 1}})),
    lambda p: p.write_text(json.dumps({"format": cache.FORMAT, "key": p.stem, "summary": {"d": "ArgFacts",
                                                                                          "kind": "x"}})),
    lambda p: p.write_text(json.dumps({"format": cache.FORMAT, "key": p.stem,
                                       "summary": {"d": "ModuleSummary", "functions": [1, 2]}})),
    lambda p: p.write_text(json.dumps({"format": cache.FORMAT, "key": p.stem, "summary": {"t": [[1], 2]}})),
])
def test_a_corrupt_or_foreign_entry_is_ignored_and_rewritten(tmp_path, monkeypatch, damage):
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj) == WANT
    for entry in _entries(where):
        damage(entry)
    _drop_findings(where)
    project.clear_cache()
    assert lint_all(proj) == WANT
    assert cache.stats()["hits"] == 0 and cache.stats()["writes"] > 0
    for entry in _entries(where):  # rewritten: readable again
        assert json.loads(entry.read_text(encoding="utf-8"))["key"] == entry.stem


def test_an_unwritable_cache_folder_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    monkeypatch.setenv("FLAKE8_XLA_CACHE_DIR", str(blocker / "sub"))
    proj = tmp_path / "p"
    _make(proj)
    assert lint_all(proj) == WANT
    assert cache.stats()["writes"] == 0


def test_off_writes_nothing(tmp_path, monkeypatch):
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj, Settings(cache="off")) == WANT
    assert not where.exists()


def test_the_cli_no_cache_flag_and_the_flake8_option(tmp_path):
    where = tmp_path / "cache"
    proj = tmp_path / "p"
    _make(proj)
    env = dict(os.environ, FLAKE8_XLA_CACHE_DIR=str(where))
    cli = [sys.executable, "-m", "flake8_xla", "--select=XLA", "engine.py"]
    out = subprocess.run(cli + ["--no-cache"], cwd=proj, env=env, capture_output=True, text=True)
    assert "engine.py:8:" in out.stdout and not where.exists(), out.stderr
    out = subprocess.run([sys.executable, "-m", "flake8", "--select=XLA", "--xla-cache=off", "engine.py"], cwd=proj,
                         env=env, capture_output=True, text=True)
    assert "engine.py:8:" in out.stdout and not where.exists(), out.stderr
    out = subprocess.run(cli, cwd=proj, env=env, capture_output=True, text=True)
    assert "engine.py:8:" in out.stdout and _entries(where), out.stderr


def test_an_unnamed_folder_inside_the_project_is_not_used(tmp_path, monkeypatch):
    proj = tmp_path / "p"
    _make(proj)
    monkeypatch.delenv("FLAKE8_XLA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(proj / ".cache"))
    monkeypatch.setattr(cache, "_platform_folder", lambda: proj / ".cache" / "flake8-xla")
    assert cache.folder(proj) is None
    assert lint_all(proj) == WANT
    assert not (proj / ".cache").exists()
    # named by the user, it is used wherever it is
    monkeypatch.setenv("FLAKE8_XLA_CACHE_DIR", str(proj / ".named"))
    assert cache.folder(proj) == proj / ".named"


def test_a_module_without_torch_touches_no_cache(tmp_path, monkeypatch):
    where, proj = _cached(tmp_path, monkeypatch)
    write(proj, {"tools/report.py": "import json\n\n\ndef main(path):\n    return json.load(open(path))\n"})
    from test_project_mode import lint

    assert lint(proj, "tools/report.py") == set()
    assert not where.exists()


def test_summaries_round_trip_exactly(tmp_path):
    proj = tmp_path / "p"
    _make(proj)
    files = project._project(proj.resolve())
    for rel in ("train.py", "engine.py", "backends/__init__.py", "backends/xla_backend.py"):
        s = summary.summarise((proj / rel).resolve(), files, Settings())
        text = json.dumps(cache._encode(s))
        assert cache._decode(json.loads(text)) == s
        assert json.loads(text, object_hook=cache._decoded) == s  # (the hook load reads)


PROJECTS = sorted(p.parent.name for p in SHARED.glob("*/PROJECT")) if SHARED.is_dir() else []


@pytest.mark.skipif(not PROJECTS, reason="../shared/projects not present")
@pytest.mark.parametrize("name", PROJECTS)
def test_handed_projects_same_cold_and_warm(tmp_path, name):
    from flake8_runner import flake8
    from test_projects import project_files

    folder = SHARED / name
    env_dir = tmp_path / "cache"
    old = os.environ.get("FLAKE8_XLA_CACHE_DIR")
    os.environ["FLAKE8_XLA_CACHE_DIR"] = str(env_dir)
    try:
        files = project_files(folder)
        cold = flake8(files, [], cwd=folder)
        assert _entries(env_dir), "the cold run wrote no summaries"
        stamp = {p: p.stat().st_mtime_ns for p in _entries(env_dir)}
        warm = flake8(files, [], cwd=folder)
        assert {p: p.stat().st_mtime_ns for p in _entries(env_dir)} == stamp  # read, not rewritten
    finally:
        if old is None:
            os.environ.pop("FLAKE8_XLA_CACHE_DIR", None)
        else:
            os.environ["FLAKE8_XLA_CACHE_DIR"] = old
    assert cold == warm


def test_the_linted_module_is_not_parsed_again(tmp_path, monkeypatch):
    """The engine lends the host's tree of the module it lints (summary.hold_tree): a
    summary of that module asked meanwhile reuses it when the file's text is the text the
    host parsed (an unsaved buffer is parsed from the file); the loan ends with the run."""
    import ast

    from flake8_xla import engine

    p = tmp_path / "m.py"
    p.write_text("x = 1\n")
    tree = ast.parse("x = 1\n")
    summary.hold_tree(p, "x = 1\n", tree)
    try:
        assert summary.parse_module(p) is tree
        summary.hold_tree(p, "x = 2\n", tree)  # (the host's buffer is not the file)
        got = summary.parse_module(p)
        assert got is not tree and ast.dump(got) == ast.dump(tree)
    finally:
        summary.hold_tree(None)
    assert summary.parse_module(p) is not tree
    where, proj = _cached(tmp_path, monkeypatch)
    text = (proj / "train.py").read_text()  # (it names torch_xla: the engine's full path)
    seen = []
    real = summary.hold_tree
    monkeypatch.setattr(project, "hold_tree", lambda *a: (seen.append(a[0]), real(*a)))
    engine.run(ast.parse(text), Settings(), text, filename=str(proj / "train.py"))
    assert seen[0] == (proj / "train.py").resolve() and seen[-1] is None
    assert summary._HELD == [None, None, None]
    assert lint_all(proj) == WANT  # (the same findings, the loans included)

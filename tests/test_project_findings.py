"""Each linted module's final findings in project mode, kept on disk (flake8_xla/project/findings.py):
written by a cold run for every module that needs the walk, read back by a warm one (no project
facts, no model, no rules for it) with the same findings to the last field, never trusted when
they do not fit, never written for a text that is not the file's nor when a rule failed, keyed
by every setting and the rules that ran; a module that never mentions torch touches no cache."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from flake8_xla import engine, project
from flake8_xla.project import cache
from flake8_xla.registry import Finding, all_rules
from flake8_xla.settings import Settings
from test_project_mode import write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

ROOT = Path(__file__).resolve().parent.parent

PLAIN = "def add(a, b):\n    return a + b\n"

#: (line, col, code) of the findings on examples/train_port.py linted as train.py of the project
WANT_TRAIN = [(21, 14, "XLA109"), (26, 4, "XLA103"), (27, 4, "XLA104"), (28, 13, "XLA804"), (29, 12, "XLA402"),
              (30, 16, "XLA101"), (30, 16, "XLA102"), (34, 8, "XLA301"), (35, 33, "XLA401"), (40, 8, "XLA805"),
              (44, 4, "XLA001")]


def _project(tmp_path, monkeypatch) -> tuple[Path, Path]:
    where = tmp_path / "cache"
    monkeypatch.setenv("FLAKE8_XLA_CACHE_DIR", str(where))
    proj = tmp_path / "p"
    write(proj, {"pyproject.toml": "", "train.py": (ROOT / "examples" / "train_port.py").read_text(encoding="utf-8"),
                 "done.py": (ROOT / "examples" / "train_port_done.py").read_text(encoding="utf-8"),
                 "plain.py": PLAIN})
    return where, proj


def _lint(proj: Path, name: str, settings: Settings | None = None, text: str | None = None) -> list[Finding]:
    path = proj / name
    text = path.read_text(encoding="utf-8") if text is None else text
    return engine.run(ast.parse(text), settings or Settings(), text, filename=str(path))


def _full(found: list[Finding]) -> list[tuple]:
    return [(f.line, f.col, f.code, f.message, f.end, f.covers) for f in found]


def _entries(where: Path) -> list[Path]:
    folder = where / cache.FINDINGS
    return sorted(folder.rglob("*.json")) if folder.exists() else []


def _cold(tmp_path, monkeypatch):
    where, proj = _project(tmp_path, monkeypatch)
    got = {name: _full(_lint(proj, name)) for name in ("train.py", "done.py", "plain.py")}
    assert [(line, col, code) for line, col, code, *_ in got["train.py"]] == WANT_TRAIN
    assert got["done.py"] == [] and got["plain.py"] == []
    assert cache.finding_stats() == {"hits": 0, "misses": 2, "writes": 2}  # (plain.py: the fast path)
    assert len(_entries(where)) == 2
    project.clear_cache()  # a new process: nothing in memory
    return where, proj, got


def test_warm_run_reads_the_findings_back_and_analyses_nothing(tmp_path, monkeypatch):
    where, proj, cold = _cold(tmp_path, monkeypatch)
    stamp = {p: p.stat().st_mtime_ns for p in _entries(where)}

    def boom(*a, **k):
        raise AssertionError("analysed again on a warm cache")

    with monkeypatch.context() as patched:
        for name in ("Model", "_project_facts", "lend_tree"):
            patched.setattr(engine, name, boom)
        warm = {name: _full(_lint(proj, name)) for name in ("train.py", "done.py")}
    warm["plain.py"] = _full(_lint(proj, "plain.py"))  # (the fast path: asks whether anything reaches it)
    assert warm == cold  # every field: message, end, covers
    assert cache.finding_stats() == {"hits": 2, "misses": 0, "writes": 0}
    assert cache.stats() == {"hits": 0, "misses": 0, "writes": 0}  # no summary read
    assert {p: p.stat().st_mtime_ns for p in _entries(where)} == stamp  # read, not rewritten


def test_an_entry_holds_the_findings_as_they_were(tmp_path, monkeypatch):
    where, proj, cold = _cold(tmp_path, monkeypatch)
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in _entries(where)]
    assert all(doc["format"] == cache.FORMAT and doc["key"] == p.stem for doc, p in zip(docs, _entries(where)))
    stored = sorted(len(doc["findings"]) for doc in docs)
    assert stored == [0, 11]
    full = next(doc["findings"] for doc in docs if doc["findings"])
    assert [tuple(item[:4]) for item in full] == [f[:4] for f in cold["train.py"]]
    assert all(len(item) == 6 and type(item[5]) is bool for item in full)


@pytest.mark.parametrize("spoil", [
    lambda p, doc: p.write_text("{not json", encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "key": "someone else's"}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "format": -1}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "findings": {"a": 1}}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "findings": [[1, 2, "XLA401"]]}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "findings": [[1, 0, "XLA401", "m", [1], True]]}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "findings": [[1, 0, "XLA401", "m", None, 1]]}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps([doc]), encoding="utf-8"),
])
def test_a_spoilt_entry_is_linted_again_and_rewritten(tmp_path, monkeypatch, spoil):
    where, proj, cold = _cold(tmp_path, monkeypatch)
    for entry in _entries(where):
        spoil(entry, json.loads(entry.read_text(encoding="utf-8")))
    warm = {name: _full(_lint(proj, name)) for name in ("train.py", "done.py", "plain.py")}
    assert warm == cold
    assert cache.finding_stats() == {"hits": 0, "misses": 2, "writes": 2}
    for entry in _entries(where):
        assert json.loads(entry.read_text(encoding="utf-8"))["key"] == entry.stem


def test_the_key_holds_every_setting_and_the_rules(tmp_path, monkeypatch):
    where, proj, cold = _cold(tmp_path, monkeypatch)
    found = _lint(proj, "train.py", Settings(unreported=("XLA103",)))  # (the host's select and ignore)
    assert [(f.line, f.col, f.code) for f in found] == WANT_TRAIN
    assert _lint(proj, "train.py", Settings(docs_url=None)) == _lint(proj, "train.py")
    rules = [all_rules()["XLA401"]]
    only = engine.run(ast.parse((proj / "train.py").read_text(encoding="utf-8")), Settings(),
                      (proj / "train.py").read_text(encoding="utf-8"), rules=rules, filename=str(proj / "train.py"))
    assert [(f.line, f.col, f.code) for f in only] == [(35, 33, "XLA401")]
    # one new entry for each: unreported, docs_url, the one rule (the default read back once)
    assert cache.finding_stats() == {"hits": 1, "misses": 3, "writes": 3}
    assert len(_entries(where)) == 5


def test_a_text_that_is_not_the_files_writes_no_entry(tmp_path, monkeypatch):
    """An editor's unsaved buffer: linted, not kept (a new entry per edit)."""
    where, proj = _project(tmp_path, monkeypatch)
    text = (proj / "train.py").read_text(encoding="utf-8") + "\n\nprint('edited')\n"
    found = _lint(proj, "train.py", text=text)
    assert [(f.line, f.col, f.code) for f in found] == WANT_TRAIN
    assert cache.finding_stats() == {"hits": 0, "misses": 1, "writes": 0} and not _entries(where)


def test_a_failing_rule_is_not_kept(tmp_path, monkeypatch):
    where, proj = _project(tmp_path, monkeypatch)
    rule = all_rules()["XLA401"]

    def fails(self, model):
        raise ValueError("a bug of the rule")

    monkeypatch.setattr(rule, "check", fails)
    found = _lint(proj, "train.py")
    assert ("XLA000" in {f.code for f in found}) and "XLA401" not in {f.code for f in found}
    assert cache.finding_stats()["writes"] == 0 and not _entries(where)
    monkeypatch.undo()
    monkeypatch.setenv("FLAKE8_XLA_CACHE_DIR", str(where))
    assert [(f.line, f.col, f.code) for f in _lint(proj, "train.py")] == WANT_TRAIN


def test_no_entries_with_the_cache_off(tmp_path, monkeypatch):
    where, proj = _project(tmp_path, monkeypatch)
    found = _lint(proj, "train.py", Settings(cache="off"))
    assert [(f.line, f.col, f.code) for f in found] == WANT_TRAIN
    assert not _entries(where) and cache.finding_stats() == {"hits": 0, "misses": 0, "writes": 0}


def test_a_module_that_never_mentions_torch_touches_no_cache(tmp_path, monkeypatch):
    where, proj = _project(tmp_path, monkeypatch)

    def boom(*a, **k):
        raise AssertionError("the cache was touched")

    for name in ("project_digest", "load", "load_answers", "load_findings", "folder"):
        monkeypatch.setattr(cache, name, boom)
    assert _lint(proj, "plain.py") == []
    assert not where.exists()


def test_an_entry_is_written_whole_through_a_temporary_file_of_its_own(tmp_path, monkeypatch):
    where = tmp_path / "c"
    cache._write(where, "ab" + "0" * 62, '{"x": "\u00e9"}')
    cache._write(where, "ab" + "1" * 62, "[]")
    assert sorted(p.name for p in (where / "ab").iterdir()) == ["ab" + "0" * 62 + ".json", "ab" + "1" * 62 + ".json"]
    assert (where / "ab" / ("ab" + "0" * 62 + ".json")).read_bytes() == '{"x": "\u00e9"}'.encode("utf-8")
    assert str(where / "ab") in cache._MADE

    def fails(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(cache.os, "replace", fails)
    with pytest.raises(OSError):
        cache._write(where, "ab" + "2" * 62, "[]")
    assert len(list((where / "ab").iterdir())) == 2  # (the temporary file removed)


# --- the reach verdict: a module that needs no walk of its own ----------------------------------

from test_project_cache import WANT, _cached  # noqa: E402  (the dual-backend project: engine.py is reached)
from test_project_mode import lint_all  # noqa: E402


def _reach(where: Path) -> list[Path]:
    folder = where / cache.REACH
    return sorted(folder.rglob("*.json")) if folder.exists() else []


def test_a_warm_run_builds_no_reach_and_reads_no_summary(tmp_path, monkeypatch):
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj) == WANT  # (engine.py imports torch only: XLA code where train.py's launch reaches it)
    entries = _reach(where)
    assert len(entries) == 1
    doc = json.loads(entries[0].read_text(encoding="utf-8"))
    assert doc["key"] == entries[0].stem and doc["wrappers"] is False and doc["nothing"] is False
    assert str((proj / "engine.py").resolve()) in doc["files"]
    written = cache.finding_stats()["writes"]
    project.clear_cache()

    def boom(*a, **k):
        raise AssertionError("the reach was built on a warm cache")

    monkeypatch.setattr(project, "_reach_index", boom)
    monkeypatch.setattr(engine, "Model", boom)
    assert lint_all(proj) == WANT
    assert cache.finding_stats() == {"hits": written, "misses": 0, "writes": 0}
    assert cache.stats() == {"hits": 0, "misses": 0, "writes": 0}  # no summary read


def test_the_verdict_of_each_module(tmp_path, monkeypatch):
    where, proj = _cached(tmp_path, monkeypatch)
    write(proj, {"tools.py": "import torch\n\n\ndef norm(x):\n    return torch.linalg.norm(x)\n"})
    settings = Settings()
    assert project.reach_verdict(str(proj / "tools.py"), settings) is None  # (none kept yet)
    lint_all(proj)
    project.clear_cache()
    assert project.reach_verdict(str(proj / "engine.py"), settings) is True  # reached
    assert project.reach_verdict(str(proj / "tools.py"), settings) is False  # reached by no launch
    assert project.reach_verdict(str(proj / "tools.py"), Settings(cache="off")) is None
    assert project.reach_verdict(str(proj / "tools.py"), Settings(scope="always")) is None  # (another key)
    project.clear_cache()
    (proj / "tools.py").write_text("import torch\n", encoding="utf-8")  # an edit: another project digest
    assert project.reach_verdict(str(proj / "tools.py"), settings) is None


@pytest.mark.parametrize("spoil", [
    lambda p, doc: p.write_text("{not json", encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "key": "someone else's"}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "format": -1}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "files": "engine.py"}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "files": [1]}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({k: v for k, v in doc.items() if k != "nothing"}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "wrappers": "no"}), encoding="utf-8"),
])
def test_a_spoilt_verdict_is_ignored_and_rewritten(tmp_path, monkeypatch, spoil):
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj) == WANT
    (entry,) = _reach(where)
    good = entry.read_text(encoding="utf-8")
    spoil(entry, json.loads(good))
    shutil.rmtree(where / cache.FINDINGS)  # (else the findings answer first)
    project.clear_cache()
    assert project.reach_verdict(str(proj / "engine.py"), Settings()) is None
    assert lint_all(proj) == WANT
    assert entry.read_text(encoding="utf-8") == good


def test_a_module_with_windows_line_ends_keeps_its_findings(tmp_path, monkeypatch):
    where, proj = _project(tmp_path, monkeypatch)
    path = proj / "train.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    project.clear_cache()
    with open(path, encoding="utf-8") as fh:  # (universal newlines, as the hosts read it)
        text = fh.read()
    assert "\r" not in text
    assert [(f.line, f.col, f.code) for f in _lint(proj, "train.py", text=text)] == WANT_TRAIN
    assert cache.finding_stats() == {"hits": 0, "misses": 1, "writes": 1}
    project.clear_cache()
    assert [(f.line, f.col, f.code) for f in _lint(proj, "train.py", text=text)] == WANT_TRAIN
    assert cache.finding_stats() == {"hits": 1, "misses": 0, "writes": 0}


def test_findings_linted_without_the_project_facts_are_not_kept(tmp_path, monkeypatch):
    """A project layer that fails (a bug) leaves the module alone, unknown: linted, not kept."""
    where, proj = _project(tmp_path, monkeypatch)

    def fails(*a, **k):
        raise AttributeError("a bug of the project layer")

    monkeypatch.setattr(engine, "facts_for", fails)
    assert [(f.line, f.col, f.code) for f in _lint(proj, "train.py")] == WANT_TRAIN
    assert cache.finding_stats() == {"hits": 0, "misses": 1, "writes": 0} and not _entries(where)

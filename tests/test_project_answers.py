"""The linted modules' answers to the project questions asked most, kept on disk
(flake8_xla/project/answers.py): written by a cold run, read back by a warm one with the same
findings, never trusted when they do not fit, never written for a text that is not the
file's, off with the cache."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from flake8_xla import engine, project
from flake8_xla.project import cache
from flake8_xla.settings import Settings
from test_project_cache import WANT, _cached
from test_project_mode import lint_all

pytestmark = pytest.mark.usefixtures("fresh_project_cache")


def _answers(where: Path) -> list[Path]:
    folder = where / cache.ANSWERS
    return sorted(folder.rglob("*.json")) if folder.exists() else []


def _cold(tmp_path, monkeypatch) -> tuple[Path, Path, list[Path]]:
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj) == WANT
    entries = _answers(where)
    assert entries and cache.answer_stats()["writes"] == len(entries)
    # the modules' final findings (tests/test_project_findings.py) would answer a warm run of the
    # same settings before any question is asked: gone, as for a host with other settings
    shutil.rmtree(where / cache.FINDINGS)
    project.clear_cache()  # a new process: nothing in memory
    return where, proj, entries


def test_warm_run_reads_the_answers_back(tmp_path, monkeypatch):
    where, proj, entries = _cold(tmp_path, monkeypatch)
    names = set()
    for entry in entries:
        doc = json.loads(entry.read_text(encoding="utf-8"))
        assert doc["key"] == entry.stem and doc["format"] == cache.FORMAT
        names.update(name for name, _ in doc["answers"])
    assert {"markers", "saves", "loaders"} <= names
    stamp = {p: p.stat().st_mtime_ns for p in entries}
    assert lint_all(proj) == WANT
    got = cache.answer_stats()
    assert got["writes"] == 0 and got["misses"] == 0 and got["hits"] == len(entries)
    assert {p: p.stat().st_mtime_ns for p in _answers(where)} == stamp  # read, not rewritten


@pytest.mark.parametrize("spoil", [
    lambda p, doc: p.write_text("{not json", encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "key": "someone else's"}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "format": -1}), encoding="utf-8"),
    lambda p, doc: p.write_text(json.dumps({**doc, "answers": {"markers": []}}), encoding="utf-8"),
    # answers that do not fit the module's walk: asked again
    lambda p, doc: p.write_text(json.dumps({**doc, "answers": [
        [name, [10 ** 6] if name == "markers" else [[-1, True]] if name == "saves" else [[3], [2]]
         if name == "loaders" else ["not facts"]] for name, _ in doc["answers"]]}), encoding="utf-8"),
])
def test_spoilt_answers_are_asked_again(tmp_path, monkeypatch, spoil):
    where, proj, entries = _cold(tmp_path, monkeypatch)
    for entry in entries:
        spoil(entry, json.loads(entry.read_text(encoding="utf-8")))
    assert lint_all(proj) == WANT


def test_spoilt_entries_are_rewritten(tmp_path, monkeypatch):
    where, proj, entries = _cold(tmp_path, monkeypatch)
    for entry in entries:
        entry.write_text("{not json", encoding="utf-8")
    assert lint_all(proj) == WANT
    assert cache.answer_stats()["writes"] == len(entries)
    for entry in _answers(where):
        assert json.loads(entry.read_text(encoding="utf-8"))["key"] == entry.stem


def test_a_text_that_is_not_the_files_writes_no_answers(tmp_path, monkeypatch):
    """An editor's unsaved buffer: its answers are computed, not kept (a new entry per edit)."""
    where, proj = _cached(tmp_path, monkeypatch)
    path = proj / "engine.py"
    text = path.read_text(encoding="utf-8") + "\n\nprint('edited')\n"
    found = engine.run(ast.parse(text), Settings(), text, filename=str(path))
    assert {(f.line, f.code) for f in found} == {(line, code) for name, line, code in WANT if name == "engine.py"}
    assert cache.answer_stats()["writes"] == 0 and not _answers(where)


def test_no_answers_with_the_cache_off(tmp_path, monkeypatch):
    where, proj = _cached(tmp_path, monkeypatch)
    assert lint_all(proj, Settings(cache="off")) == WANT
    assert not _answers(where) and cache.answer_stats() == {"hits": 0, "misses": 0, "writes": 0}

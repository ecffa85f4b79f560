"""Rule fixtures (exact findings through the engine, silence with noqa through real flake8),
the rules' own bad/good examples, and option handling."""

from __future__ import annotations

import ast
import shlex
from pathlib import Path

import pytest

from annotations import fixture_to_noqa, parse_fixture
from flake8_runner import flake8
from flake8_xla import docgen, engine, settings as settings_mod
from flake8_xla.registry import all_rules

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_FILES = sorted(FIXTURES.glob("XLA*.py"))
RULES = all_rules()


def settings_from_flags(flags: list[str]) -> settings_mod.Settings:
    """A fixture's ``# options:`` flags (scope, version, reducing calls, launchers)."""
    return docgen.settings_from_flags(flags)


def lint(source: str, **kw) -> list:
    return engine.run(ast.parse(source), settings_mod.build(kw.get("scope"), kw.get("version")), source)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.stem for p in FIXTURE_FILES])
def test_fixture_exact_findings(path):
    fixture = parse_fixture(path)
    source = path.read_text(encoding="utf-8")
    found = engine.run(ast.parse(source), settings_from_flags(fixture.options), source)
    got = {(f.line, f.col + 1, f.code) for f in found}
    # a marker without a column matches any column on its line
    expected_cols = {(line, col, code) for line, col, code in fixture.expected if col is not None}
    expected_any = {(line, code) for line, col, code in fixture.expected if col is None}
    got_compared = {(line, col, code) for line, col, code in got if (line, code) not in expected_any}
    assert sorted(got_compared) == sorted(expected_cols)
    assert {(line, code) for line, _, code in got} >= expected_any
    assert len(got) == len(fixture.expected), sorted(got)


@pytest.mark.slow  # every fixture through flake8 (~6 s): keeps the default run under its budget
def test_fixtures_silenced_by_noqa_through_flake8(tmp_path):
    groups: dict[tuple, list[Path]] = {}
    for path in FIXTURE_FILES:
        fixture = parse_fixture(path)
        target = tmp_path / path.name
        target.write_text(fixture_to_noqa(path.read_text(encoding="utf-8")), encoding="utf-8")
        groups.setdefault(tuple(fixture.options), []).append(target)
    for flags, paths in groups.items():
        found = flake8(paths, list(flags))
        assert all(not v for v in found.values()), {str(k): v for k, v in found.items() if v}


def test_fixtures_through_flake8_match_engine():
    """The plugin reports exactly what the engine does, with flake8's 1-based columns. Each
    fixture is one file linted alone, as the engine is given it here (no file name: single-file
    mode), so flake8 runs them with ``--xla-project=off``: in project mode the fixtures folder's
    root would be this repository, whose other modules they never import."""
    groups: dict[tuple, list[Path]] = {}
    for path in FIXTURE_FILES:
        groups.setdefault(tuple(parse_fixture(path).options), []).append(path)
    for flags, paths in groups.items():
        found = flake8(paths, list(flags), extra=["--xla-project=off"])
        for path in paths:
            source = path.read_text(encoding="utf-8")
            direct = engine.run(ast.parse(source), settings_from_flags(list(flags)), source)
            assert found[path.resolve()] == {(f.line, f.col + 1, f.code) for f in direct}, shlex.join(flags)


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_has_fixture_with_findings(code):
    path = FIXTURES / f"{code}.py"
    assert path.exists(), f"write tests/fixtures/{code}.py"
    fixture = parse_fixture(path)
    assert any(c == code for _, _, c in fixture.expected), f"{path.name} never expects {code}"


EXAMPLES = [(code, "bad", i, src) for code, cls in sorted(RULES.items()) for i, src in enumerate(cls.bad)] + \
           [(code, "good", i, src) for code, cls in sorted(RULES.items()) for i, src in enumerate(cls.good)]


@pytest.mark.parametrize("code,kind,index,source", EXAMPLES, ids=[f"{c}-{k}{i}" for c, k, i, _ in EXAMPLES])
def test_rule_examples(code, kind, index, source):
    """An example may start with ``# options: --xla-version=2.4`` (shown in the docs too)."""
    first = source.splitlines()[0] if source else ""
    flags = shlex.split(first.split(":", 1)[1]) if first.startswith("# options:") else []
    found = engine.run(ast.parse(source), settings_from_flags(flags), source)
    codes = [f.code for f in found]
    if kind == "bad":
        assert code in codes
    else:
        assert code not in codes


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_has_examples(code):
    cls = RULES[code]
    assert cls.bad and cls.good

"""Meta tests: codes, docs, CHANGELOG, README and CI stay in step with the rule classes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flake8_xla import docgen
from flake8_xla.registry import CODE_RE, all_rules

ROOT = Path(__file__).resolve().parent.parent
RULES = all_rules()
SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"]


def test_codes_unique_and_valid():
    assert len(RULES) == len(set(RULES)) == 48
    for code, cls in RULES.items():
        assert CODE_RE.match(code) and cls.code == code
        assert code != "XLA000"


def test_names_unique_kebab():
    names = [cls.name for cls in RULES.values()]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n) for n in names)


@pytest.mark.parametrize("code", sorted(RULES))
def test_docstring_sections_in_ruff_order(code):
    doc = RULES[code].__doc__ or ""
    positions = [doc.find(s) for s in SECTIONS]
    assert all(p >= 0 for p in positions), f"{code} lacks {[s for s, p in zip(SECTIONS, positions) if p < 0]}"
    assert positions == sorted(positions)
    assert "torch_xla" in doc.split("## References", 1)[1]


@pytest.mark.parametrize("code", sorted(RULES))
def test_message_and_fix(code):
    cls = RULES[code]
    assert cls.message and cls.fix and ";" not in cls.message


@pytest.mark.parametrize("code", sorted(RULES))
def test_changelog_mentions_rule(code):
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"{code} `{RULES[code].name}`" in text


def test_docs_are_what_docgen_writes():
    for rel, content in docgen.pages().items():
        path = ROOT / "docs" / rel
        assert path.exists(), f"run python -m flake8_xla.docgen ({rel} missing)"
        assert path.read_text(encoding="utf-8") == content, f"run python -m flake8_xla.docgen ({rel} differs)"
    extra = {p.name for p in (ROOT / "docs" / "rules").glob("*.md")} - {f"{c}.md" for c in RULES}
    assert not extra, f"docs for rules that do not exist: {extra}"


def test_docgen_check_mode(tmp_path):
    assert docgen.main(["--check", str(tmp_path)]) == 1
    assert docgen.main([str(tmp_path)]) == 0
    assert docgen.main(["--check", str(tmp_path)]) == 0


def _readme_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```sh\n(.+?)\n```", text)[:2]


def test_ci_runs_exactly_the_readme_commands():
    install_and_lint, run_tests = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "flake8 --select=XLA examples/" in install_and_lint and "pytest" in run_tests
    assert install_and_lint in ci
    assert run_tests in ci


def test_readme_example_output_is_current():
    """The Quick start block in README.md is exactly what flake8 prints on examples/."""
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select=XLA", "examples/"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout == block

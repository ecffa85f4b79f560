"""Meta tests: codes, docs, CHANGELOG, README and CI stay in step with the rule classes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flake8_xla import docgen
from flake8_xla.registry import CODE_RE, all_rules

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
RULES = all_rules()
SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"]


def test_codes_unique_and_valid():
    assert len(RULES) == len(set(RULES)) == 77
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


def _variants():
    """The messages docgen collects over the rules' examples and this tree's fixtures (named:
    an installed flake8_xla, run by the tests of an unpacked sdist, has no tests/ beside it)."""
    return docgen.collect_variants(fixtures=FIXTURES)


def test_docs_are_what_docgen_writes():
    for rel, content in docgen.pages(variants=_variants()).items():
        path = ROOT / "docs" / rel
        assert path.exists(), f"run python -m flake8_xla.docgen ({rel} missing)"
        assert path.read_text(encoding="utf-8") == content, f"run python -m flake8_xla.docgen ({rel} differs)"
    extra = {p.name for p in (ROOT / "docs" / "rules").glob("*.md")} - {f"{c}.md" for c in RULES}
    assert not extra, f"docs for rules that do not exist: {extra}"


def test_stored_messages_are_what_docgen_collects():
    """flake8_xla/data/messages.json (what an installed package renders) is current."""
    variants = _variants()
    assert docgen.MESSAGES_JSON.read_text(encoding="utf-8") == docgen.messages_json(variants), \
        "run python -m flake8_xla.docgen"
    for code, cls in RULES.items():
        assert variants[code], f"{code} reports nothing on its examples"
        assert docgen.rule_page(cls) == docgen.pages(variants=variants)[f"rules/{code}.md"]


def test_pages_list_the_real_messages():
    """Each wording a rule reports on its examples and fixtures is on its page, verbatim."""
    variants = _variants()
    for code in RULES:
        page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
        section = page.split("## Messages", 1)[1].split("## Examples that must fire", 1)[0]
        assert [line for line in section.splitlines() if line.startswith(code)] == \
            [f"{code} {m}" for m in variants[code]]
    # one line per wording: the quoted code does not make a new line
    assert docgen.skeleton("xmp.spawn() given nprocs=8: raises") == \
        docgen.skeleton("xmp.spawn() given nprocs=flags.num_cores: raises")
    assert docgen.skeleton("a device read; use x") != docgen.skeleton("a device read; drop x")


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_says_where_the_finding_is_reported(code):
    page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    assert "- Reported at: " in page and f"`# noqa: {code}`" in page
    assert RULES[code].reported_at, f"{code}: set reported_at (where the finding is reported, for noqa)"


def test_hints_marked_in_docs():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "## Hints" in index and "--extend-select=XLA" in index
    for code, cls in RULES.items():
        page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
        assert ("- Level: **hint**" in page) == cls.hint
        assert (f"`{cls.name}` (hint)" in index) == cls.hint


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


@pytest.mark.parametrize("args", [["--select=XLA", "examples"], ["--extend-select=XLA", "examples"],
                                  ["--select=XLA,E9", "examples/"]])
def test_project_config_lints_examples_when_asked(args):
    """setup.cfg does not exclude examples, so asking for the XLA rules on examples (with or
    without the slash) works."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "flake8", "--format=%(path)s %(code)s", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    found = {tuple(line.split()) for line in proc.stdout.splitlines()}
    assert proc.returncode == 1 and not proc.stderr, proc.stderr
    assert ("examples/train_port.py", "XLA001") in found
    assert all(path == "examples/train_port.py" and code.startswith("XLA") for path, code in found), found


def test_plain_flake8_in_the_clone_runs_the_xla_rules_as_the_readme_says():
    """The README's plain `flake8 train.py` (the XLA rules but the hints) holds inside the clone:
    the project's setup.cfg selects nothing, so `flake8 examples/train_port.py` reports the
    example's findings (the quick start's, none of them a hint) and the finished port none."""
    import subprocess
    import sys

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "A plain `flake8 train.py` runs the XLA rules too, except the hints" in readme
    block = re.search(r"```text\n(.*?)```", readme, re.S).group(1)
    proc = subprocess.run([sys.executable, "-m", "flake8", "examples/train_port.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (1, "")
    assert proc.stdout == block and len(block.splitlines()) == 11
    done = subprocess.run([sys.executable, "-m", "flake8", "examples/train_port_done.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_readme_names_the_skips_of_a_fresh_clone():
    """The README says why tests skip: each skip reason the tests give outside the development
    checkout (a missing ../shared) and for a newer Python's syntax is named there."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    reasons = set()
    for path in (ROOT / "tests").glob("test_*.py"):
        reasons |= set(re.findall(r'reason="(\.\./shared/[^"]+)"', path.read_text(encoding="utf-8")))
    assert reasons == {"../shared/cases not present", "../shared/projects not present"}
    for reason in sorted(reasons) + ["needs Python (3, 12)", "Python (3, 13) syntax"]:
        assert f'"{reason}"' in readme, reason
    assert "skips 11 tests" in readme and "7 lint source in the syntax of Python 3.12, 3.13 or 3.14" in readme


def test_docs_name_the_skips_of_the_runtime_set():
    """Every reason a runtime-set test skips with (tests/runtime: a string literal, or the fixed
    part of an f-string before its first ``{``; the missing runtime's reason) is quoted in
    docs/benchmarks.md, and the README gives the counts."""
    conftest = (ROOT / "tests" / "runtime" / "conftest.py").read_text(encoding="utf-8")
    docs = " ".join((ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").split())
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "114 of its 161 tests run and 47 skip, each with its reason" in readme
    reasons = {"FLAKE8_XLA_RUNTIME_PYTHON" + re.search(r'NO_RUNTIME = f"\{RUNTIME_ENV\}([^"]+)"', conftest)[1]}
    for path in (ROOT / "tests" / "runtime").glob("*.py"):
        for found in re.findall(r'pytest\.skip\(f?"([^"]+)"', path.read_text(encoding="utf-8")):
            reasons.add(found.split("{")[0].strip())
    assert len(reasons) == 4, reasons
    for reason in sorted(reasons):
        assert reason in docs, reason


def test_pre_commit_hook_selects_syntax_errors():
    """The hook's default args are one argument (a bare comma in a YAML flow list splits it)."""
    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["args"] == ["--select=XLA,E9"]


def test_docs_name_every_hint():
    """README and docs/usage.md list the hint-level rules by code: the list is the registry's."""
    from flake8_xla.registry import hint_codes

    hints = sorted(hint_codes())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    assert f"({', '.join(hints)})" in readme
    assert f"(today {', '.join(hints[:-1])} and {hints[-1]})" in usage

"""The standalone CLI at flake8's level: files and exclusions (flake8's defaults, the project's
flake8 config, per-file-ignores, .gitignore), stdin, exit codes, the output formats (SARIF
validated against the SARIF 2.1.0 schema), `flake8-xla rule`, and the one option validator
that flake8, pylint and the CLI share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import flake8_xla
from flake8_xla.cli.config import as_per_file_ignores
from flake8_xla.cli.select import Selector
from flake8_xla.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
#: the rule pages' default links: docs/rules/ of this release's tree
RELEASE_PAGES = f"{flake8_xla.__url__}/blob/v{flake8_xla.__version__}/docs/rules/"
SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
BAD = "import torch_xla.core.xla_model as xm\nxm.mark_step()\nn = xm.xrt_world_size()\n"
DDP = ("import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
       "def f(model):\n    return DDP(model)\n")


def cli(args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "flake8_xla", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300, input=stdin)


def flake8(args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "flake8", "--select=XLA", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, input=stdin)


def lines(proc):
    return sorted(proc.stdout.splitlines())


def write(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.slow  # whole repository through both tools (~10 s): keeps the default run under its budget
def test_repository_root_same_as_flake8():
    """In this repository's root the CLI reads the project's [flake8] exclusions: the same
    findings as flake8 (the rule fixtures and handed cases are excluded there)."""
    got, want = cli([], ROOT), flake8([], ROOT)
    assert want.returncode in (0, 1) and "Traceback" not in got.stderr
    assert lines(got) == lines(want)
    assert "tests/fixtures" not in got.stdout


PROJECT = {
    "setup.cfg": "[flake8]\nextend-exclude = vendored,gen/*.py\nper-file-ignores =\n"
                 "    scripts/*:XLA805\n    scripts/old.py:XLA8\nextend-ignore = XLA102\n",
    "train.py": BAD,
    "ddp.py": DDP.replace("DDP(model)", "DDP(model, device_ids=[0])"),
    "scripts/run.py": BAD,
    "scripts/old.py": BAD,
    "vendored/lib.py": BAD,
    "gen/auto.py": BAD,
    "gen/keep.txt": "",
    ".venv/lib/site.py": BAD,
    "build/lib/x.py": BAD,
    "node_modules/x.py": BAD,
    "pkg.egg-info/x.py": BAD,
}


def test_project_flake8_config_same_as_flake8(tmp_path):
    write(tmp_path, PROJECT)
    got = cli([], tmp_path)
    assert got.returncode == 1, got.stderr
    # flake8 lints build/, .venv/... (not in its default excludes): the CLI skips them as Ruff
    # does; everything else is flake8's decision (a command-line --extend-exclude would replace
    # the config's, so the extra folders go to --exclude)
    want = flake8(["--exclude=.git,__pycache__,build,*.egg-info,node_modules,.venv"], tmp_path).stdout.splitlines()
    assert lines(got) == sorted(want)
    reported = {line.split(":")[0] for line in got.stdout.splitlines()}
    assert reported == {"./train.py", "./ddp.py", "./scripts/run.py"}
    assert "XLA102" not in got.stdout and "XLA101" in got.stdout  # extend-ignore read from [flake8]
    assert "./scripts/run.py:3:5: XLA801" in got.stdout and "scripts/run.py:2:1" not in got.stdout
    # named paths are excluded as flake8 excludes them; --isolated reads no config
    assert cli(["gen/auto.py"], tmp_path).stdout == flake8(["gen/auto.py"], tmp_path).stdout == ""
    # (a pattern is a name or a path: "vendored" skips the folder while walking, not vendored/lib.py)
    assert cli(["vendored/lib.py"], tmp_path).stdout == flake8(["vendored/lib.py"], tmp_path).stdout != ""
    assert cli(["--isolated", "."], tmp_path).stdout.count("XLA805") == 5


def test_exclude_options_and_pyproject(tmp_path):
    write(tmp_path, {"a.py": BAD, "sub/b.py": BAD, "build/c.py": BAD, "skip_me/d.py": BAD})
    assert {line.split(":")[0] for line in cli([], tmp_path).stdout.splitlines()} == {"./a.py", "./sub/b.py",
                                                                                      "./skip_me/d.py"}
    # --exclude replaces the defaults (build/ is linted again), --extend-exclude adds
    files = {line.split(":")[0] for line in cli(["--exclude=sub"], tmp_path).stdout.splitlines()}
    assert files == {"./a.py", "./build/c.py", "./skip_me/d.py"}
    files = {line.split(":")[0] for line in cli(["--extend-exclude=skip_*,a.py"], tmp_path).stdout.splitlines()}
    assert files == {"./sub/b.py"}
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flake8-xla]\nextend-exclude = ["skip_me"]\nexit-zero = true\n'
        '[tool.flake8-xla.per-file-ignores]\n"sub/*" = ["XLA805"]\n')
    proc = cli([], tmp_path)
    assert proc.returncode == 0 and "skip_me" not in proc.stdout
    assert "./sub/b.py:3:5: XLA801" in proc.stdout and "./sub/b.py:2:1" not in proc.stdout
    # the command line wins over pyproject.toml; pyproject.toml over [flake8]
    (tmp_path / "setup.cfg").write_text("[flake8]\nextend-exclude = a.py\nexclude = nothing\n")
    proc = cli(["--per-file-ignores=a.py:XLA8"], tmp_path)
    assert "a.py" not in proc.stdout and "./sub/b.py:2:1" in proc.stdout and "build/c.py" in proc.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-xla]\nexit-zero = "yes"\n')
    proc = cli([], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "flake8-xla: error: pyproject.toml: [tool.flake8-xla] exit-zero: expected true or false, got string\n"


def test_gitignore(tmp_path):
    write(tmp_path, {
        ".gitignore": "ignored/\n*_gen.py\n/top_only.py\n",
        ".git/info/exclude": "local.py\n",
        "a.py": BAD, "x_gen.py": BAD, "top_only.py": BAD, "local.py": BAD,
        "sub/top_only.py": BAD, "sub/y_gen.py": BAD, "ignored/z.py": BAD,
        "sub/.gitignore": "!keep_gen.py\n", "sub/keep_gen.py": BAD,
    })
    (tmp_path / "ignored" / ".gitignore").write_text("")
    files = {line.split(":")[0] for line in cli([], tmp_path).stdout.splitlines()}
    assert files == {"./a.py", "./sub/top_only.py", "./sub/keep_gen.py"}
    files = {line.split(":")[0] for line in cli(["sub"], tmp_path).stdout.splitlines()}
    assert files == {"sub/top_only.py", "sub/keep_gen.py"}
    # a folder or file named on the command line is linted even when git ignores it
    assert {line.split(":")[0] for line in cli(["ignored"], tmp_path).stdout.splitlines()} == {"ignored/z.py"}
    assert cli(["x_gen.py"], tmp_path).returncode == 1
    files = {line.split(":")[0] for line in cli(["--no-respect-gitignore"], tmp_path).stdout.splitlines()}
    assert len(files) == 8
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-xla]\nrespect-gitignore = false\n")
    assert len({line.split(":")[0] for line in cli([], tmp_path).stdout.splitlines()}) == 8
    # outside a git work tree .gitignore files mean nothing (as to git)
    (tmp_path / "pyproject.toml").unlink()
    os.rename(tmp_path / ".git", tmp_path / "not-git")
    assert len({line.split(":")[0] for line in cli([], tmp_path).stdout.splitlines()}) == 8


def test_stdin_exit_zero_and_exit_codes(tmp_path):
    write(tmp_path, {"setup.cfg": "[flake8]\nexclude = gen\nper-file-ignores = tests/*:XLA805\n"})
    proc = cli(["-"], tmp_path, stdin=BAD)
    assert proc.returncode == 1 and proc.stdout.splitlines()[0].startswith("stdin:2:1: XLA805")
    assert proc.stdout == flake8(["-"], tmp_path, stdin=BAD).stdout
    proc = cli(["--stdin-filename=src/train.py", "-"], tmp_path, stdin=BAD)
    assert proc.stdout.startswith("src/train.py:2:1: XLA805")
    # the name is matched against per-file-ignores and exclude, as flake8's --stdin-display-name
    for name in ("tests/t.py", "gen"):
        got = cli(["--stdin-filename", name, "-"], tmp_path, stdin=BAD)
        assert got.stdout == flake8(["--stdin-display-name", name, "-"], tmp_path, stdin=BAD).stdout
    assert cli(["--stdin-filename", "tests/t.py", "-"], tmp_path, stdin=BAD).stdout.count("XLA805") == 0
    assert cli(["--stdin-filename=x.py"], tmp_path, stdin=BAD).stdout.startswith("x.py:2:1: XLA805")
    proc = cli(["--exit-zero", "-"], tmp_path, stdin=BAD)
    assert proc.returncode == 0 and "XLA805" in proc.stdout
    assert cli(["-"], tmp_path, stdin="import torch_xla\n").returncode == 0


BROKEN = {
    "a.py": "def f(:\n", "b.py": "x = (1,\n", "c.py": "if True:\n  x\n   y\n", "d.py": 'x = "abc\n',
    "e.py": 'f"{x!}"\n', "g.py": "\ufeffdef f(:\n", "h.py": "import torch_xla\n\tif x:\n        pass\n",
}


def test_e999_positions_are_flake8s(tmp_path):
    write(tmp_path, BROKEN)
    got = cli(["."], tmp_path)
    want = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=E9,XLA", "."],
                          capture_output=True, text=True, cwd=tmp_path)
    assert lines(got) == lines(want) and len(lines(got)) == len(BROKEN)
    # --select=XLA hides them under flake8, never under the CLI; an explicit ignore does
    assert len(lines(cli(["--select=XLA", "."], tmp_path))) == len(BROKEN)
    assert cli(["--extend-ignore=E999", "."], tmp_path).stdout.count("E999") == 0


def test_json_fields(tmp_path):
    write(tmp_path, {"t.py": BAD, "broken.py": "def f(:\n"})
    data = json.loads(cli(["--format=json", "t.py", "broken.py"], tmp_path).stdout)
    assert data[0] == {
        "path": "t.py", "line": 2, "col": 1, "end_line": 2, "end_col": 13, "code": "XLA805",
        "name": "deprecated-mark-step", "severity": "warning",
        "message": "xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()",
        "url": f"{RELEASE_PAGES}XLA805.md", "fix": "safe",  # no xla-docs-url configured: this release's page
    }
    assert data[1]["code"] == "XLA801" and data[1]["severity"] == "error"
    assert data[2] == {"path": "broken.py", "line": 1, "col": 8, "end_line": None, "end_col": None, "code": "E999",
                       "name": "syntax-error", "severity": "error", "message": "SyntaxError: invalid syntax",
                       "url": None, "fix": "none"}


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    checker = cls.FORMAT_CHECKER
    assert {"uri", "uri-reference"} <= set(checker.checkers), "install rfc3986-validator: URIs must be checked"
    return cls(schema, format_checker=checker)


def test_sarif_validates_against_the_schema(tmp_path):
    write(tmp_path, {"src/train é.py": "# é\n" + BAD, "broken.py": "def f(:\n",
                     "ddp.py": DDP.replace("return DDP(model)", "x = 'é'; return DDP(model)")})
    proc = cli(["--format=sarif", "."], tmp_path)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    errors = sorted(_validator().iter_errors(log), key=str)
    assert not errors, errors[0]
    (tmp_path / "out.sarif").write_text(proc.stdout)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules if r["id"].startswith("XLA") and r["id"] != "XLA000"] == sorted(all_rules())
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["help"]["text"]
        if rule["id"] in all_rules():
            assert rule["helpUri"] == f"{RELEASE_PAGES}{rule['id']}.md" and rule["help"]["markdown"].startswith(f"# {rule['id']}")
        else:
            assert "helpUri" not in rule
    results = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]): r for r in run["results"]}
    assert set(results) == {("XLA805", "src/train%20%C3%A9.py"), ("XLA801", "src/train%20%C3%A9.py"),
                            ("E999", "broken.py"), ("XLA101", "ddp.py")}
    ddp = results[("XLA101", "ddp.py")]
    # columns count characters in SARIF ('é' is two bytes): flake8's col is 22, the character 21
    region = ddp["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 4, "startColumn": 21, "endLine": 4, "endColumn": 31}
    assert "col=22" in cli(["--format=github", "ddp.py"], tmp_path).stdout
    assert ddp["level"] == "error" and rules[ddp["ruleIndex"]]["id"] == "XLA101"
    assert results[("XLA805", "src/train%20%C3%A9.py")]["level"] == "warning"
    # an empty run is valid too
    empty = json.loads(cli(["--format=sarif", "--select=XLA9", "--extend-ignore=E9"], tmp_path).stdout)
    assert not list(_validator().iter_errors(empty)) and empty["runs"][0]["results"] == []


def test_rule_and_list_rules(tmp_path):
    proc = cli(["rule", "XLA101"], tmp_path)
    assert proc.returncode == 0
    page = (ROOT / "docs" / "rules" / "XLA101.md").read_text(encoding="utf-8")
    assert proc.stdout == page + f"\nDocs: {RELEASE_PAGES}XLA101.md\n"  # no xla-docs-url configured: this release's page
    assert cli(["rule", "ddp-without-gradient-as-bucket-view"], tmp_path).stdout == proc.stdout
    assert cli(["rule", "--all"], tmp_path).stdout.count(f"\nDocs: {RELEASE_PAGES}XLA") == len(all_rules())
    bad = cli(["rule", "XLA999"], tmp_path)
    assert bad.returncode == 2 and "unknown rule 'XLA999'" in bad.stderr
    listed = cli(["--list-rules"], tmp_path).stdout.splitlines()
    assert [line.split()[0] for line in listed] == sorted(all_rules())
    data = json.loads(cli(["--list-rules", "--format=json"], tmp_path).stdout)
    assert {d["code"] for d in data} == set(all_rules()) and all(d["url"] == f"{RELEASE_PAGES}{d['code']}.md" for d in data)


def test_selection_is_flake8s(monkeypatch):
    s = Selector()
    assert s.reported("a.py", "XLA805") and s.reported("a.py", "E999")
    assert not Selector(select=["XLA1"]).reported("a.py", "XLA805")
    assert Selector(select=["XLA"], extend_ignore=["XLA80"]).reported("a.py", "XLA101")
    assert not Selector(select=["XLA"], extend_ignore=["XLA80"]).reported("a.py", "XLA805")
    assert Selector(select=["XLA805"], ignore=["XLA8"]).reported("a.py", "XLA805")  # the longer prefix wins
    # a hint-level rule (hint = True) is off by default and on once XLA is selected explicitly
    code = sorted(all_rules())[0]
    monkeypatch.setattr(all_rules()[code], "hint", True, raising=False)
    assert not Selector().reported("a.py", code)
    assert Selector(select=["XLA"]).reported("a.py", code)
    assert Selector(extend_select=["XLA"]).reported("a.py", code)
    assert not Selector(select=["XLA"], extend_ignore=[code]).reported("a.py", code)
    pairs = as_per_file_ignores("tests/*:XLA8 tests/special.py:XLA1", Path.cwd(), "")
    assert pairs == [(str(Path.cwd() / "tests/*"), ["XLA8"]), (str(Path.cwd() / "tests/special.py"), ["XLA1"])]
    per_file = Selector(per_file_ignores=pairs)
    assert not per_file.reported("tests/a.py", "XLA805") and per_file.reported("tests/a.py", "XLA101")
    # only the longest matching pattern applies, as in flake8
    assert per_file.reported("tests/special.py", "XLA805") and not per_file.reported("tests/special.py", "XLA101")


# --- one option validator for flake8, pylint and the CLI -------------------------------------

ACCEPTED = [("--xla-version=2.9.1", True), ("--xla-version=v2.8", True), ("--xla-version=", True),
            ("--xla-scope=ALWAYS", True), ("--xla-scope=", True), ("--xla-version=2.7", False)]
REFUSED = [("--xla-version=1.9", "option --xla-version: invalid value '1.9' (choose a torch_xla release, 2.0 or newer"),
           ("--xla-scope=sometimes", "option --xla-scope: invalid value 'sometimes' (choose from 'auto', 'always')")]


def _three_hosts(arg, cwd):
    lint = ["--isolated"]
    pylint = [sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--disable=all",
              "--enable=xla", "--persistent=n", "--score=n", arg, "t.py"]
    return {
        "flake8": subprocess.run([sys.executable, "-m", "flake8", *lint, "--select=XLA", arg, "t.py"],
                                 capture_output=True, text=True, cwd=cwd),
        "pylint": subprocess.run(pylint, capture_output=True, text=True, cwd=cwd),
        "flake8-xla": cli([*lint, arg, "t.py"], cwd),
    }


@pytest.mark.parametrize("arg,reports", ACCEPTED, ids=[a for a, _ in ACCEPTED])
def test_same_values_accepted_everywhere(tmp_path, arg, reports):
    (tmp_path / "t.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    for host, proc in _three_hosts(arg, tmp_path).items():
        assert "error" not in proc.stderr, (host, proc.stderr)
        assert ("XLA805" in proc.stdout) is reports, (host, proc.stdout)


@pytest.mark.parametrize("arg,text", REFUSED, ids=[a for a, _ in REFUSED])
def test_same_error_everywhere(tmp_path, arg, text):
    (tmp_path / "t.py").write_text("import torch_xla\n")
    for host, proc in _three_hosts(arg, tmp_path).items():
        # a usage error: 2 as argparse's, but 32 under pylint (its 2 means "error-level messages issued")
        assert proc.returncode == (32 if host == "pylint" else 2), (host, proc.returncode, proc.stderr)
        assert proc.stderr.startswith(f"{host}: error: {text}"), (host, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_same_error_from_each_config_file(tmp_path):
    (tmp_path / "t.py").write_text("import torch_xla\n")
    why = "xla-scope: invalid value 'sometimes' (choose from 'auto', 'always')"
    want = f"error: option --{why}"
    (tmp_path / "setup.cfg").write_text("[flake8]\nxla-scope = sometimes\n")
    assert want in flake8(["t.py"], tmp_path).stderr  # flake8 does not say which file a value came from
    assert cli(["t.py"], tmp_path).stderr == f"flake8-xla: error: setup.cfg: [flake8] {why}\n"  # the CLI does
    (tmp_path / "setup.cfg").unlink()
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-xla]\nxla-scope = "sometimes"\n'
                                             '[tool.pylint.xla]\nxla-scope = "sometimes"\n')
    assert cli(["t.py"], tmp_path).stderr == f"flake8-xla: error: pyproject.toml: [tool.flake8-xla] {why}\n"
    pylint = subprocess.run([sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin",
                             "--persistent=n", "t.py"], capture_output=True, text=True, cwd=tmp_path)
    assert pylint.returncode == 32 and want in pylint.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-xla]\nxla-version = 2.10\n")
    proc = cli(["t.py"], tmp_path)
    assert proc.returncode == 2 and "write the release as a string" in proc.stderr


def test_config_option_reads_one_file(tmp_path):
    write(tmp_path, {"a.py": BAD, "b.py": BAD, "setup.cfg": "[flake8]\nextend-exclude = a.py\n",
                     "ci.cfg": "[flake8]\nextend-exclude = b.py\n", "other.toml": "[tool.other]\nx = 1\n",
                     "xla.toml": "[tool.flake8-xla]\nextend-exclude = [\"a.py\", \"b.py\"]\n"})
    assert {line.split(":")[0] for line in cli([], tmp_path).stdout.splitlines()} == {"./b.py"}
    assert {line.split(":")[0] for line in cli(["--config=ci.cfg"], tmp_path).stdout.splitlines()} == {"./a.py"}
    assert cli(["--config=xla.toml"], tmp_path).returncode == 0
    for name, needle in (("other.toml", "no [tool.flake8-xla] table"), ("missing.cfg", "no such file")):
        proc = cli([f"--config={name}"], tmp_path)
        assert proc.returncode == 2 and needle in proc.stderr


def test_list_rules_into_a_closed_pipe_has_no_traceback(tmp_path):
    """`flake8-xla --list-rules | head -1`: the reader leaves early; no BrokenPipeError trace."""
    proc = subprocess.run(f"{sys.executable} -m flake8_xla --list-rules | head -1", shell=True,
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.stdout.startswith("XLA") and "Traceback" not in proc.stderr, proc.stderr

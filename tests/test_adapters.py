"""The other ways to run the rules: the pylint plugin, the standalone CLI, pre-commit.
Each must report, on every handed case, the same (line, code) set as flake8."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_cases import RUNS, _id, _results, _runnable, expected

ROOT = Path(__file__).resolve().parent.parent
PYLINT_TEMPLATE = "{path}\t{line}\t{column}\t{msg_id}\t{symbol}\t{msg}"


def _pylint(paths, flags, cwd=None, extra=()):
    cmd = [sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--disable=all",
           "--enable=xla", "--persistent=n", "--score=n", f"--msg-template={PYLINT_TEMPLATE}", *extra,
           *flags, *map(str, paths)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr + proc.stdout
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("*" * 5) or "\t" not in line:
            continue
        path, row, col, msg_id, symbol, msg = line.split("\t", 5)
        out.setdefault((Path(cwd or ".") / path).resolve(), set()).add((int(row), int(col), msg_id, symbol, msg))
    return out, proc


def _cli(args, cwd=None):
    return subprocess.run([sys.executable, "-m", "flake8_xla", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return str(tmp_path_factory.mktemp("adapters"))


def _flag_to_pylint(flags):
    return [f.replace("--xla-", "--xla-") for f in flags]


@pytest.fixture(scope="module")
def pylint_results():
    groups = {}
    for case, name in RUNS:
        if _runnable(case):
            groups.setdefault(tuple(case.variants[name]), []).append(case)
    out = {}
    for flags, cases in groups.items():
        found, _ = _pylint([c.path for c in cases], list(flags))
        for case in cases:
            out[(str(case.path), flags)] = {(line, msg.split()[0]) for line, _, _, _, msg in found.get(case.path.resolve(), ())}
    return out


@pytest.mark.slow  # every handed case through pylint and flake8 (~25 s a worker, project mode over the repo): .ci/run runs it
@pytest.mark.parametrize("run", RUNS, ids=[_id(r) for r in RUNS])
def test_pylint_matches_flake8(run, pylint_results, scratch):
    case, name = run
    if not _runnable(case):
        pytest.skip(f"needs Python {case.requires}")
    key = (str(case.path), tuple(case.variants[name]))
    assert pylint_results[key] == _results(False, scratch)[key] == expected(case, name)


@pytest.mark.slow  # every handed case through the CLI and flake8 (~10 s): .ci/run runs it
@pytest.mark.parametrize("run", RUNS, ids=[_id(r) for r in RUNS])
def test_cli_matches_flake8(run, scratch):
    case, name = run
    if not _runnable(case):
        pytest.skip(f"needs Python {case.requires}")
    proc = _cli(["--format=json", "--select=XLA", *case.variants[name], case.path])
    got = {(r["line"], r["code"]) for r in json.loads(proc.stdout)}
    key = (str(case.path), tuple(case.variants[name]))
    assert got == _results(False, scratch)[key] == expected(case, name)
    assert proc.returncode == (1 if got else 0)


def test_pylint_message_ids_symbols_and_text(tmp_path):
    src = tmp_path / "t.py"
    src.write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\nxm.optimizer_step()\n")
    found, _ = _pylint([src], [])
    rows = sorted(found[src.resolve()])
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (2, 0, "C7805", "deprecated-mark-step"), (3, 0, "E7809", "bad-call-signature")]
    assert rows[0][4].startswith("XLA805 xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()")


def test_pylint_options_from_pyproject_and_disable_pragma(tmp_path):
    (tmp_path / "t.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n"
                                   "xm.xla_device()  # pylint: disable=deprecated-xla-device\n"
                                   "def f(m):\n    return m.cuda()\n")
    found, _ = _pylint(["t.py"], [], cwd=tmp_path)
    assert {r[2] for r in found[(tmp_path / "t.py").resolve()]} == {"C7805", "E7401"}
    (tmp_path / "pyproject.toml").write_text('[tool.pylint.xla]\nxla-version = "2.7"\n')
    found, _ = _pylint(["t.py"], [], cwd=tmp_path)
    assert {r[2] for r in found[(tmp_path / "t.py").resolve()]} == {"E7401"}


def test_pylint_bad_option_value(tmp_path):
    (tmp_path / "t.py").write_text("import torch_xla\n")
    _, proc = _pylint(["t.py"], ["--xla-version=1.9"], cwd=tmp_path)
    assert proc.returncode == 32 and "pylint: error: option --xla-version: invalid value '1.9'" in proc.stderr


BAD = "import torch_xla.core.xla_model as xm\nxm.mark_step()\nn = xm.xrt_world_size()\n"


def test_cli_exit_codes_formats_and_noqa(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text("import torch_xla\ntorch_xla.sync()\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "quiet.py").write_text(
        "import torch_xla.core.xla_model as xm\n"
        "xm.mark_step()  # noqa: XLA805\n"
        "n = xm.xrt_world_size(  # noqa\n    1,\n)\n"
        "m = xm.xrt_world_size(\n    1,\n)  # noqa: as in flake8, only the reported line counts\n"
        "xm.mark_step()  # noqa: XLA1\n")
    skip = tmp_path / ".venv" / "lib"
    skip.mkdir(parents=True)
    (skip / "vendored.py").write_text(BAD)
    assert _cli(["good.py"], tmp_path).returncode == 0
    proc = _cli(["bad.py"], tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "bad.py:2:1: XLA805 xm.mark_step is deprecated since torch_xla 2.8; use torch_xla.sync()",
        "bad.py:3:5: XLA801 xm.xrt_world_size was removed in torch_xla 2.7; use xr.world_size()",
    ]
    proc = _cli(["."], tmp_path)
    lines = [line.removeprefix("./") for line in proc.stdout.splitlines()]  # flake8 prints ./bad.py too
    assert [line.split(":")[0] for line in lines] == ["bad.py", "bad.py", "broken.py", "quiet.py", "quiet.py"]
    assert lines[2].startswith("broken.py:1:8: E999 SyntaxError")  # flake8's column
    assert lines[3].startswith("quiet.py:6:5: XLA801") and lines[4].startswith("quiet.py:9:1: XLA805")
    flake8_lines = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=XLA", "quiet.py"],
                                  capture_output=True, text=True, cwd=tmp_path).stdout.splitlines()
    assert flake8_lines == lines[3:]  # noqa handled exactly as flake8 handles it
    gh = _cli(["--format=github", "bad.py"], tmp_path).stdout.splitlines()
    assert gh[0] == ("::warning file=bad.py,line=2,col=1,title=XLA805::XLA805 xm.mark_step is deprecated since "
                     "torch_xla 2.8; use torch_xla.sync()")
    data = json.loads(_cli(["--format=json", "--select=XLA80", "--ignore=XLA805", "bad.py"], tmp_path).stdout)
    assert [(d["path"], d["line"], d["col"], d["code"], d["message"]) for d in data] == [
        ("bad.py", 3, 5, "XLA801", "xm.xrt_world_size was removed in torch_xla 2.7; use xr.world_size()")]
    assert _cli(["--xla-version=2.4", "bad.py"], tmp_path).returncode == 0
    for args, needle in ((["--xla-scope=x"], "option --xla-scope: invalid value 'x'"),
                         (["missing.py"], "no such file or folder: missing.py"),
                         (["--format=xml"], "invalid choice: 'xml'")):
        proc = _cli(args, tmp_path)
        assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr


def test_cli_reads_nearest_pyproject(tmp_path):
    sub = tmp_path / "pkg" / "sub"
    sub.mkdir(parents=True)
    (sub / "bad.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-xla]\nxla-version = "2.6"\nignore = ["XLA805"]\n')
    proc = _cli(["bad.py"], sub)
    assert proc.stdout.splitlines() == [
        "bad.py:3:5: XLA801 xm.xrt_world_size is deprecated since torch_xla 2.5, removed in 2.7; use xr.world_size()"]
    assert _cli(["--xla-version=2.9", "--ignore=", "bad.py"], sub).stdout.count("XLA80") == 2
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-xla]\nxla_scope = "sometimes"\n')
    proc = _cli(["bad.py"], sub)
    assert proc.returncode == 2
    assert proc.stderr == (f"flake8-xla: error: {tmp_path / 'pyproject.toml'}: [tool.flake8-xla] xla_scope: "
                           "invalid value 'sometimes' (choose from 'auto', 'always')\n")
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-xla]\nselct = ["XLA1"]\n')
    proc = _cli(["bad.py"], sub)
    assert proc.returncode == 2 and "unknown key 'selct'" in proc.stderr


def test_console_script_installed():
    exe = shutil.which("flake8-xla", path=str(Path(sys.executable).parent))
    assert exe, "console script flake8-xla not installed"
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("flake8-xla ")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git needed")
def test_pre_commit_try_repo(tmp_path):
    """Real `pre-commit try-repo` installs this repo's hook (pip, from the package registry)
    and fails on a repo holding one bad file, printing the finding."""
    repo = tmp_path / "user"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    (repo / "train.py").write_text(BAD)
    subprocess.run(["git", "add", "train.py"], cwd=repo, check=True, env=env)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "flake8-xla", "--all-files"],
                          cwd=repo, capture_output=True, text=True, timeout=900, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "train.py:2:1: XLA805 xm.mark_step is deprecated" in out, out
    assert "Failed" in out

"""The release path: `python -m build` makes an sdist and a wheel that `twine check` passes and
that install into a fresh venv and lint the example; the version lives in one place; the
release workflow is a valid GitHub workflow; the README's pre-commit form works from a clone.
The slow ones build and install (run with `python -m pytest -m slow`; .ci/run does)."""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

import flake8_xla

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def _readme_example_lines(path_prefix: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    return [line.replace("examples/", path_prefix, 1) for line in block.splitlines()]


def test_version_in_one_place():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["metadata"]["version"] == "attr: flake8_xla.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", flake8_xla.__version__)
    hits = [p for p in ROOT.glob("**/*") if p.is_file() and p.suffix in {".py", ".cfg", ".toml"}
            and ".venv" not in p.parts and "build" not in p.parts and "tests" not in p.parts
            and f'"{flake8_xla.__version__}"' in p.read_text(encoding="utf-8", errors="ignore")]
    assert [p.relative_to(ROOT).as_posix() for p in hits] == ["flake8_xla/__init__.py"]


def test_release_workflow_is_a_valid_github_workflow():
    yaml = pytest.importorskip("yaml")
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("check_jsonschema")
    schema_file = resources.files("check_jsonschema.builtin_schemas.vendor") / "github-workflows.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # PyYAML reads YAML 1.1, where the key `on` is True; GitHub reads it as "on"
    workflow["on"] = workflow.pop(True)
    jsonschema.validators.validator_for(schema)(schema).validate(workflow)
    assert workflow["on"] == {"push": {"tags": ["v*"]}}
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"} and publish["needs"] == "build"
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in publish["steps"])
    build_steps = " ".join(step.get("run", "") for step in workflow["jobs"]["build"]["steps"])
    for needle in ("python -m build", "twine check --strict", "flake8_xla/__init__.py", "flake8-xla train_port.py"):
        assert needle in build_steps


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.mark.slow
def test_build_check_install_and_lint(tmp_path):
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)])
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    version = flake8_xla.__version__
    assert [p.name for p in sdists] == [f"flake8_xla-{version}.tar.gz"]
    assert [p.name for p in wheels] == [f"flake8_xla-{version}-py3-none-any.whl"]
    _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sdists + wheels)])
    with zipfile.ZipFile(wheels[0]) as whl:
        names = set(whl.namelist())
        meta = whl.read(f"flake8_xla-{version}.dist-info/METADATA").decode()
        entry_points = whl.read(f"flake8_xla-{version}.dist-info/entry_points.txt").decode()
    assert {"flake8_xla/cli/__init__.py", "flake8_xla/__main__.py", "flake8_xla/rules/__init__.py"} <= names
    assert any(n.startswith("flake8_xla/data/") and n.endswith(".json") for n in names)
    assert any(n.endswith("/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "examples/")) for n in names)
    assert f"Version: {version}" in meta and "Requires-Dist: pathspec" in meta and "License" in meta
    assert "XLA = flake8_xla.flake8_plugin:Plugin" in entry_points and "flake8-xla = flake8_xla.__main__:main" in entry_points

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    _run([str(bindir / "python"), "-m", "pip", "install", "-q", str(wheels[0])])
    work = tmp_path / "user"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "train_port.py", work / "train_port.py")
    shutil.copy(ROOT / "examples" / "train_port_done.py", work / "train_port_done.py")
    want = _readme_example_lines("")
    for tool in ([str(bindir / "flake8"), "--select=XLA"], [str(bindir / "flake8-xla")]):
        proc = subprocess.run([*tool, "train_port.py", "train_port_done.py"], capture_output=True, text=True,
                              cwd=work, timeout=300)
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout.splitlines() == want, tool
    version_out = subprocess.run([str(bindir / "flake8-xla"), "--version"], capture_output=True, text=True).stdout
    assert version_out.strip() == f"flake8-xla {version}"


def _readme_precommit_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### pre-commit", 1)[1]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git needed")
def test_readme_precommit_form_works_from_a_clone(tmp_path):
    """The README's pre-commit config, with its clone path and commit filled in, installs the
    hook from this repository and fails on a bad file, printing the finding."""
    rev = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True).stdout.strip()
    config = _readme_precommit_block()
    assert "/path/to/flake8-xla" in config and "<commit>" in config
    repo = tmp_path / "user"
    repo.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    (repo / ".pre-commit-config.yaml").write_text(config.replace("/path/to/flake8-xla", str(ROOT)).replace("<commit>", rev))
    (repo / "train.py").write_text("import torch_xla.core.xla_model as xm\nxm.mark_step()\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=repo, check=True, env=env)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, capture_output=True,
                          text=True, timeout=900, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "train.py:2:1: XLA805 xm.mark_step is deprecated" in out and "Failed" in out, out


def test_ci_uses_a_temporary_venv_and_runs_the_slow_tests():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "rm -rf .venv" not in ci and "mktemp -d" in ci and 'cd "$copy"' in ci
    assert "python -m pytest -m slow" in ci and "python -m pytest -m runtime" in ci
    assert ci.count('"$rc" -eq 5') == 3  # pytest's "no tests" fails the default, slow and runtime runs

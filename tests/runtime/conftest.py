"""Shared ground of the runtime set (issue 21): programs run on torch_xla 2.9 on the CPU.

The set runs with ``python -m pytest -m runtime`` in the project's venv; the programs under test
run in a second interpreter whose venv holds ``torch==2.9.0`` and ``torch-xla==2.9.0`` (never the
project's venv: the linter itself never imports torch). ``.ci/run`` builds that venv and names its
interpreter in ``FLAKE8_XLA_RUNTIME_PYTHON``. Without that variable every runtime test is skipped
with the reason, so a plain ``pytest -m runtime`` on a machine without torch_xla says so instead of
failing; ``.ci/run`` sets it, so there nothing is skipped silently (it also fails on exit 5).
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

RUNTIME_ENV = "FLAKE8_XLA_RUNTIME_PYTHON"
#: why every runtime test skips without the runtime (quoted in the README)
NO_RUNTIME = f"{RUNTIME_ENV} does not name a python with torch_xla 2.9 (.ci/run sets it)"


@dataclass(frozen=True)
class Ran:
    """One program's run: its exit status and both output streams (text)."""

    returncode: int
    stdout: str
    stderr: str


def _interpreter() -> str | None:
    value = os.environ.get(RUNTIME_ENV)
    return value if value and Path(value).exists() else None


def pytest_collection_modifyitems(config, items):
    for item in items:  # under pytest-xdist (--dist loadgroup): a file's session-scoped runs happen once
        if "runtime" in item.keywords:
            item.add_marker(pytest.mark.xdist_group(Path(str(item.fspath)).name))
    if _interpreter():
        return
    skip = pytest.mark.skip(reason=NO_RUNTIME)
    for item in items:
        if "runtime" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def runtime_python() -> str:
    """Path of the interpreter that has torch 2.9.0 and torch-xla 2.9.0 installed."""
    path = _interpreter()
    if path is None:
        pytest.skip(NO_RUNTIME)
    return path


@pytest.fixture
def run_program(runtime_python, tmp_path):
    """Run a program's source on torch_xla (CPU, one replica) in ``tmp_path``; return a :class:`Ran`.

    ``run_program(source, timeout=300, env=None, files=None)``: ``files`` maps extra relative
    paths to their text (written beside the program). The child gets ``PJRT_DEVICE=CPU`` and no
    accelerator; a timeout raises ``subprocess.TimeoutExpired`` (a failure of the test).
    """

    def run(source: str, timeout: float = 300, env: dict[str, str] | None = None,
            files: dict[str, str] | None = None, name: str = "program.py") -> Ran:
        return run_source(runtime_python, tmp_path, source, timeout=timeout, env=env, files=files, name=name)

    return run


def run_source(python: str, directory: Path, source: str, timeout: float = 300, env: dict[str, str] | None = None,
               files: dict[str, str] | None = None, name: str = "program.py") -> Ran:
    """Write ``source`` (and ``files``: relative path -> text) into ``directory`` and run it there
    with ``python`` on the CPU client (``PJRT_DEVICE=CPU``, no accelerator, the caller's
    ``XLA_``/``PJRT_``/``TPU_`` variables dropped, then ``env`` added); return a :class:`Ran`.
    A timeout raises ``subprocess.TimeoutExpired``. Used by ``run_program`` and by session-scoped
    runs that several tests read (tests/runtime/test_rule_evidence.py)."""
    for rel, text in (files or {}).items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    script = directory / name
    script.write_text(source, encoding="utf-8")
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "PJRT_", "TPU_"))}
    child_env.update({"PJRT_DEVICE": "CPU", "CUDA_VISIBLE_DEVICES": "", "PYTHONUNBUFFERED": "1",
                      "TF_CPP_MIN_LOG_LEVEL": "2"})
    child_env.update(env or {})
    done = subprocess.run([python, str(script)], cwd=directory, env=child_env,
                          capture_output=True, text=True, timeout=timeout, check=False)
    return Ran(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="session")
def run_source_in(runtime_python):
    """Session-scoped :func:`run_source` on the runtime interpreter:
    ``run_source_in(directory, source, timeout=, env=, files=, name=)`` -> :class:`Ran`."""

    def run(directory: Path, source: str, **kwargs) -> Ran:
        return run_source(runtime_python, directory, source, **kwargs)

    return run

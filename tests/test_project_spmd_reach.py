"""Project mode: a helper module reached by an SPMD script and by an ``xmp.spawn`` script.
The launching modules' setup is merged, so SPMD alone cannot tell which code runs under it:
a function a multi-process launch reaches is not SPMD code (a pytorch/xla check found
``full_size // xr.world_size()`` of XLA FSDP's ``DummyReduceScatter`` reported)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from flake8_xla import engine
from flake8_xla.settings import Settings

UTILS = """\
import torch_xla.runtime as xr


def scale(per_device):
    return per_device * xr.world_size()


def shard(full):
    return full // xr.world_size()
"""
SPMD = """\
import torch_xla
import torch_xla.runtime as xr
from utils import scale


def main(index):
    return scale(8)


if __name__ == "__main__":
    xr.use_spmd()
    torch_xla.launch(main, debug_single_process=True)
"""
MP = """\
import torch_xla.distributed.spmd as xs
import torch_xla.distributed.xla_multiprocessing as xmp
from utils import shard


def _mp_fn(index):
    mesh = xs.get_global_mesh()
    return shard(64), mesh


if __name__ == "__main__":
    xmp.spawn(_mp_fn)
"""


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


def test_code_a_multi_process_launch_reaches_is_not_spmd(tmp_path, monkeypatch):
    for name, text in {"pyproject.toml": "", "utils.py": UTILS, "spmd_train.py": SPMD, "mp_train.py": MP}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    text = Path("utils.py").read_text(encoding="utf-8")
    found = engine.run(ast.parse(text), Settings(), text, filename=os.path.join(".", "utils.py"))
    assert [(f.line, f.col, f.code) for f in found] == [(5, 24, "XLA902")]  # scale: reached by the SPMD launch only

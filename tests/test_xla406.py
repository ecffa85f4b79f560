"""XLA406 (an "xla" device in a module that never imports torch_xla) in project mode, where
"nothing else imported torch_xla" is a fact about the project, and its fast path."""
from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from flake8_xla import engine, project
from flake8_xla.settings import Settings

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

HELPER = "import torch\n\n\ndef to_device(model):\n    return model.to('xla')\n"


def lint(base: Path, files: dict[str, str], rel: str, settings: Settings | None = None) -> set:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text, encoding="utf-8")
    text = (base / rel).read_text(encoding="utf-8")
    old = os.getcwd()
    os.chdir(base)
    try:
        found = engine.run(ast.parse(text), settings or Settings(), text, filename=rel)
    finally:
        os.chdir(old)
    return {(f.line, f.col, f.code) for f in found}


def test_fires_in_a_project_where_no_file_names_torch_xla(tmp_path):
    """A helper without a `__main__` guard (silent alone) is reported once project mode knows
    that no module of the project imports torch_xla."""
    files = {"pyproject.toml": "", "utils.py": HELPER,
             "train.py": "import torch\nfrom utils import to_device\n\nto_device(torch.nn.Linear(2, 1))\n"}
    assert lint(tmp_path, files, "utils.py") == {(5, 11, "XLA406")}
    assert lint(tmp_path, files, "utils.py", Settings(project="off")) == set()  # alone: a helper, unknown


def test_silent_where_another_module_imports_torch_xla(tmp_path):
    """The entry point imports torch_xla and then the helper: the device is registered."""
    files = {"pyproject.toml": "", "utils.py": HELPER,
             "train.py": "import torch\nimport torch_xla\nfrom utils import to_device\n\n"
                         "to_device(torch.nn.Linear(2, 1))\n"}
    assert lint(tmp_path, files, "utils.py") == set()
    # a script of the same project that imports the module that imports torch_xla
    files["eval.py"] = "import torch\nimport train\n\nx = torch.zeros(2, device='xla')\n"
    assert lint(tmp_path, files, "eval.py") == set()


def test_silent_with_a_package_that_loads_torch_xla(tmp_path):
    files = {"pyproject.toml": "",
             "run.py": "import torch\nfrom accelerate import Accelerator\n\nx = torch.zeros(2, device='xla')\n"}
    assert lint(tmp_path, files, "run.py") == set()


def test_silent_when_the_project_cannot_be_listed(tmp_path, monkeypatch):
    """More files than project mode lists: unknown, so silent."""
    monkeypatch.setattr(project.files, "MAX_FILES", 1)
    files = {"pyproject.toml": "", "utils.py": HELPER, "other.py": "x = 1\n"}
    assert lint(tmp_path, files, "utils.py") == set()


def test_fast_path_text_test_is_a_quoted_xla():
    """A module that never quotes `xla` is not walked (JAX code naming `xla_bridge` either);
    one that does is, whatever it imports."""
    assert not engine.needs_walk("import torch\nx = torch.ones(2).to('cuda')\n", Settings())
    assert not engine.needs_walk("from jax.lib import xla_bridge\nprint(xla_bridge.get_backend())\n", Settings())
    assert engine.needs_walk('import torch\nd = f"xla:{0}"\n', Settings())
    assert engine.needs_walk("import torch\nx = torch.ones(2).to('xla')\n", Settings())
    text = "import torch\nx = torch.ones(2).to('xla')\n"
    assert [(f.line, f.code) for f in engine.run(ast.parse(text), Settings(), text)] == [(2, "XLA406")]


def test_the_module_s_own_comment_naming_torch_xla_registers_nothing(tmp_path):
    """Only another file of the project naming torch_xla may have imported it: the linted
    module's own imports are read, and its comment ("never imports torch_xla") is none."""
    script = ("# runs on a TPU VM, but this script never imports torch_xla\nimport torch\n\n\n"
              "def main():\n    return torch.ones(2).to('xla')\n\n\nif __name__ == '__main__':\n    main()\n")
    assert lint(tmp_path, {"pyproject.toml": "", "smoke.py": script}, "smoke.py") == {(6, 11, "XLA406")}
    # another file that names it: it may be what imports torch_xla first
    files = {"pyproject.toml": "", "smoke.py": script, "boot.py": "import torch_xla\nimport smoke\n"}
    project.clear_cache()  # (the project changed under the same root)
    assert lint(tmp_path, files, "smoke.py") == set()

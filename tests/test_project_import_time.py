"""XLA003 at import time (issue 28, session 13).

A module-level runtime call in a module the launching script imports at module level (or
through a chain of modules imported at module level) runs in the launching process when
the script starts, before its ``xmp.spawn`` / ``torch_xla.launch``. Imports inside the
launched function run in each replica, a ``__main__`` block of the imported module does not
run on import, and a script that launches nothing (SPMD, one device) has no launch to be
before: all silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

HELPERS = '''\
import torch_xla
import torch_xla.runtime as xr

WORLD = xr.world_size()


def device():
    return torch_xla.device()


if __name__ == "__main__":
    print(xr.global_ordinal())
'''

RUN = '''\
import torch_xla

import helpers


def _mp_fn(index):
    print(helpers.device())


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_runtime_call_at_import_before_the_launch(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS, "run.py": RUN})
    assert lint_all(tmp_path) == {("helpers.py", 4, "XLA003")}
    project.clear_cache()
    assert lint(tmp_path, "helpers.py") == {("helpers.py", 4, "XLA003")}


def test_through_a_module_imported_at_module_level(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS, "common.py": "from helpers import device\n",
                     "run.py": RUN.replace("import helpers", "import common as helpers")})
    assert lint_all(tmp_path) == {("helpers.py", 4, "XLA003")}


@pytest.mark.parametrize("run", [
    # imported in the launched function: each replica imports it
    RUN.replace("import helpers\n", "").replace("def _mp_fn(index):\n", "def _mp_fn(index):\n    import helpers\n"),
    # no launch: an SPMD / single-device script starts the runtime where it means to
    "import torch_xla.runtime as xr\n\nimport helpers\n\nif __name__ == '__main__':\n    xr.use_spmd()\n"
    "    print(helpers.device())\n",
    # a single-process debug launch runs in this process anyway
    RUN.replace("torch_xla.launch(_mp_fn)", "torch_xla.launch(_mp_fn, debug_single_process=True)"),
    # an import for the type checker only never runs
    RUN.replace("import helpers\n", "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import helpers\n"),
    # imported after the launch returned
    RUN.replace("import helpers\n", "").replace("    torch_xla.launch(_mp_fn)\n",
                                              "    torch_xla.launch(_mp_fn)\n    import helpers\n"),
])
def test_silent_without_an_import_before_a_multi_process_launch(tmp_path, run):
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS, "run.py": run})
    assert lint_all(tmp_path) == set()

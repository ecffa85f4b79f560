"""Session 17's project-mode pieces (issue 28), each with its traps.

- A folder below the project root that holds a root marker of its own (``pyproject.toml``,
  ``setup.cfg``, ``setup.py``, ``.git``: a vendored package, a submodule, a fixture project)
  is another project: the outer project's listing leaves it out, so each file belongs to
  the one project its own lint reads.
"""

from __future__ import annotations

import pytest

from flake8_xla.project.files import ProjectFiles, find_root
from test_project_mode import write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.cfg", "setup.py", ".git"])
def test_nested_project_left_out_of_the_listing(tmp_path, marker):
    write(tmp_path, {"pyproject.toml": "", "train.py": "", "pkg/__init__.py": "", "pkg/util.py": "",
                     f"vendor/lib/{marker}": "", "vendor/lib/a.py": "", "vendor/lib/deep/b.py": "",
                     "vendor/c.py": ""})
    files = ProjectFiles(tmp_path.resolve()).files()
    assert sorted(p.relative_to(tmp_path.resolve()).as_posix() for p in files) == [
        "pkg/__init__.py", "pkg/util.py", "train.py", "vendor/c.py"]
    # the nested project's own files are its own project, listed from its root
    inner = tmp_path.resolve() / "vendor/lib"
    assert find_root(inner / "deep/b.py") == inner
    assert sorted(p.relative_to(inner).as_posix() for p in ProjectFiles(inner).files()) == sorted(
        ["a.py", "deep/b.py"] + (["setup.py"] if marker == "setup.py" else []))


def test_git_folder_marks_a_nested_project(tmp_path):
    write(tmp_path, {"setup.py": "", "m.py": "", "sub/.git/HEAD": "", "sub/s.py": ""})
    files = ProjectFiles(tmp_path.resolve()).files()
    assert sorted(p.name for p in files) == ["m.py", "setup.py"]

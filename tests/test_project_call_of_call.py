"""A call of a call (``build()(x)``) in a module that project mode summarises (session 12).

Describing such a call raised inside the summary, so the whole module was unknown to project
mode (six modules of pytorch/xla's tree: ``test_train_mp_imagenet.py`` and others); it is
described now, and the module's other calls reach their callees.
"""

from __future__ import annotations

import pytest

from flake8_xla.project import _project, summary_of
from flake8_xla.settings import Settings
from test_project_mode import lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

UTILS = '''\
def upload(path):
    import subprocess
    subprocess.run(["gsutil", "cp", path, "gs://bucket/x"])


def make_hook():
    return print
'''

RUN = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from utils import make_hook, upload


def _mp_fn(index):
    make_hook()("starting")
    if xm.is_master_ordinal():
        upload("last.pt")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_module_with_a_call_of_a_call_is_summarised(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "run.py": RUN})
    s = summary_of((tmp_path / "run.py").resolve(), _project(tmp_path.resolve()), Settings())
    assert s is not None
    assert {cf.target[1] for cf in s.calls_into} >= {"make_hook", "upload"}
    assert lint_all(tmp_path) == {("run.py", 9, "XLA604")}

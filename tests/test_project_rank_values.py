"""XLA604 with the shared action in another module (issue 28, session 12: rank values).

``if xm.is_master_ordinal(): upload(path)`` where ``upload`` (another module) runs ``gsutil cp``
to a bucket: the local master is one process per host, so every host uploads. The global
master (``local=False``) is silent, as is a helper that only writes a local file.
"""

from __future__ import annotations

import pytest

from test_project_mode import lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

COMMON = '''\
import subprocess


def upload(path, dest):
    subprocess.run(["gsutil", "cp", path, dest], check=True)


def keep(path, text):
    with open(path, "w") as f:
        f.write(text)
'''

RUN = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from common import keep, upload


def _mp_fn(index):
    if xm.is_master_ordinal():
        upload("last.pt", "gs://bucket/run/last.pt")
    if xm.is_master_ordinal():
        keep("done.txt", "ok")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_helper_uploading_under_the_local_master(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "common.py": COMMON, "run.py": RUN})
    assert lint_all(tmp_path) == {("run.py", 8, "XLA604")}


def test_the_global_master_is_silent(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "common.py": COMMON,
                     "run.py": RUN.replace("xm.is_master_ordinal():\n        upload",
                                           "xm.is_master_ordinal(local=False):\n        upload")})
    assert lint_all(tmp_path) == set()


DIST = '''\
import torch_xla.core.xla_model as xm


def is_main():
    return xm.is_master_ordinal()


def save_checkpoint(state, path):
    xm.save(state, path)
'''

RUN_SAVE = '''\
import torch
import torch_xla

from dist import is_main, save_checkpoint


def _mp_fn(index):
    model = torch.nn.Linear(4, 4).to(torch_xla.device())
    if is_main():
        save_checkpoint(model.state_dict(), "last.pt")
    save_checkpoint(model.state_dict(), "every.pt")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_helpers_xm_save_under_a_helpers_master_test(tmp_path):
    # both the rank test (is_main) and the save (save_checkpoint) are another module's helpers
    write(tmp_path, {"pyproject.toml": "", "dist.py": DIST, "run.py": RUN_SAVE})
    assert lint_all(tmp_path) == {("run.py", 10, "XLA602")}


def test_an_accelerate_style_local_main_process_attribute(tmp_path):
    run = RUN.replace("    if xm.is_master_ordinal():\n        upload", "    if acc.is_local_main_process:\n        upload") \
        .replace("def _mp_fn(index):\n", "def _mp_fn(index, acc):\n").replace("torch_xla.launch(_mp_fn)",
                                                                           "torch_xla.launch(_mp_fn, args=(None,))")
    write(tmp_path, {"pyproject.toml": "", "common.py": COMMON, "run.py": run})
    assert lint_all(tmp_path) == {("run.py", 8, "XLA604")}
    write(tmp_path, {"run.py": run.replace("acc.is_local_main_process", "acc.is_main_process")})
    assert lint_all(tmp_path) == set()


def test_the_launching_scripts_own_helper_master_test(tmp_path):
    # the script names no xm.is_master_ordinal itself: the test is an imported helper
    helpers = COMMON + "\n\ndef is_main_process():\n    import torch_xla.core.xla_model as xm\n\n" \
                       "    return xm.is_master_ordinal()\n"
    run = RUN.replace("import torch_xla.core.xla_model as xm\n", "").replace(
        "from common import keep, upload", "from common import is_main_process, keep, upload").replace(
        "    if xm.is_master_ordinal():\n        upload", "    if is_main_process():\n        upload").replace(
        "    if xm.is_master_ordinal():\n        keep", "    if is_main_process():\n        keep")
    write(tmp_path, {"pyproject.toml": "", "common.py": helpers, "run.py": run})
    assert lint_all(tmp_path) == {("run.py", 7, "XLA604")}

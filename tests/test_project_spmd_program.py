"""An SPMD program whose switch is another module's helper (issue 28, session 14; blind sets
w and z: a MaxText-style port whose ``setup_spmd()`` lives in ``sharding.py``).

The script calls ``setup_spmd(cfg)`` (``xr.use_spmd()`` and a mesh); the program is SPMD
everywhere it runs (``LaunchSetup.spmd`` from the reach, ``_reaches_spmd``), so a data module's
``shard=xr.global_ordinal()`` (0 on every host under SPMD) is XLA902 and a checkpoint
module's ``init_process_group("xla")`` is XLA107. XLA902 also knows a dataset's own
``shard=`` / ``num_shards=`` keywords and a strided slice ``files[xr.global_ordinal()::n]``.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

SHARDING = '''\
import numpy as np
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr


def setup_spmd():
    xr.use_spmd()
    n = xr.global_runtime_device_count()
    return xs.Mesh(np.arange(n), (n, 1), ("fsdp", "tensor"))
'''

DATA = '''\
import glob

import torch_xla.runtime as xr


class Shards:
    def __init__(self, pattern, shard=0, num_shards=1):
        self.files = sorted(glob.glob(pattern))[shard::num_shards]


def build(pattern):
    return Shards(pattern, shard=xr.global_ordinal(), num_shards=xr.process_count())


def host_files(pattern):
    return sorted(glob.glob(pattern))[xr.global_ordinal()::xr.process_count()]
'''

CKPT = '''\
import torch.distributed as dist


def make_manager():
    if not dist.is_initialized():
        dist.init_process_group("xla", init_method="xla://")
'''

TRAIN = '''\
import torch_xla

from ckpt import make_manager
from data import build, host_files
from sharding import setup_spmd


def main():
    mesh = setup_spmd()
    device = torch_xla.device()
    build("*.npy")
    host_files("*.npy")
    make_manager()


if __name__ == "__main__":
    main()
'''

EXPECTED = {("data.py", 12, "XLA902"), ("data.py", 16, "XLA902"), ("ckpt.py", 6, "XLA107")}


def test_the_program_is_spmd_where_a_helper_turns_it_on(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "sharding.py": SHARDING, "data.py": DATA, "ckpt.py": CKPT,
                     "train.py": TRAIN})
    assert lint_all(tmp_path) == EXPECTED
    for rel in ("data.py", "ckpt.py"):
        project.clear_cache()
        assert lint(tmp_path, rel) == {f for f in EXPECTED if f[0] == rel}


def test_without_the_switch_the_same_modules_are_silent(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "sharding.py": SHARDING.replace("    xr.use_spmd()\n", "")
                     .replace("xs.Mesh(np.arange(n), (n, 1), (\"fsdp\", \"tensor\"))", "n"),
                     "data.py": DATA, "ckpt.py": CKPT, "train.py": TRAIN})
    assert lint_all(tmp_path) == set()


def test_a_multi_process_launch_of_the_same_helpers_is_no_spmd_code(tmp_path):
    # the data and checkpoint helpers run in replicas of xmp.spawn: a replica's ordinal is its own
    spawn = TRAIN.replace("    mesh = setup_spmd()\n", "").replace("def main():", "def main(index):") \
        .replace("    main()", "    import torch_xla.distributed.xla_multiprocessing as xmp\n    xmp.spawn(main)") \
        .replace("from sharding import setup_spmd\n", "")
    write(tmp_path, {"pyproject.toml": "", "sharding.py": SHARDING, "data.py": DATA, "ckpt.py": CKPT,
                     "train.py": spawn})
    assert lint_all(tmp_path) == set()


def test_the_branch_that_tests_spmd_off_is_not_spmd_code(tmp_path):
    # a shared set-up that picks the process group by xr.is_spmd(): its `else` never runs under SPMD
    ckpt = CKPT.replace('''    if not dist.is_initialized():
        dist.init_process_group("xla", init_method="xla://")''', '''    import torch_xla.runtime as xr

    if xr.is_spmd():
        dist.init_process_group("gloo", init_method="xla://")
    else:
        dist.init_process_group("xla", init_method="xla://")''')
    write(tmp_path, {"pyproject.toml": "", "sharding.py": SHARDING, "data.py": DATA, "ckpt.py": ckpt,
                     "train.py": TRAIN})
    assert lint_all(tmp_path) == {f for f in EXPECTED if f[0] == "data.py"}

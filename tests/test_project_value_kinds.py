"""Project mode: what a value is, across a module edge (issue 28's value lattice): a
module wrapped by DDP (or FSDP, ``torch.compile``) around a module moved to the XLA device is
on the device too, so a checkpoint state holding its ``state_dict()`` handed to another
module's save helper is XLA state there (XLA601)."""

from __future__ import annotations

import pytest

from test_project_mode import lint_all, write

#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")

UTILS = '''\
import os

import torch


def save_checkpoint(state, out_dir):
    torch.save(state, os.path.join(out_dir, "ckpt.pt"))
'''

TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch.nn.parallel import DistributedDataParallel as DDP

from utils import save_checkpoint


def _mp_fn(index, out):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4)
    model = WRAP
    if xm.is_master_ordinal(local=False):
        save_checkpoint({"epoch": 1, "state_dict": model.state_dict()}, out)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=("out",))
'''


@pytest.mark.parametrize("wrap", ["DDP(model.to(device), gradient_as_bucket_view=True)",
                                  "DDP(module=model.to(device), gradient_as_bucket_view=True)",
                                  "torch.compile(model.to(device))"])
def test_a_wrapped_moved_module_s_state_is_xla_state(tmp_path, wrap):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "train.py": TRAIN.replace("WRAP", wrap)})
    # (train.py has its own: torch.compile without backend= is XLA403)
    assert {f for f in lint_all(tmp_path) if f[0] == "utils.py"} == {("utils.py", 7, "XLA601")}


@pytest.mark.parametrize("wrap", ["DDP(model, gradient_as_bucket_view=True)", "torch.compile(model.cpu())",
                                  "DDP(model.to(device).cpu())"])
def test_a_wrapped_module_not_visibly_on_the_device(tmp_path, wrap):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "train.py": TRAIN.replace("WRAP", wrap)})
    assert {f for f in lint_all(tmp_path) if f[0] == "utils.py"} == set()

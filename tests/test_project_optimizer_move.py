"""XLA405 across modules (session 13): a helper builds the optimizer from the module its
caller hands in (``build_optimizer(model, lr)``), and the caller, in XLA code, moves that
module to the device after the call (``model = DDP(model.to(device))``): the optimizer holds
the host parameters. Reported at the helper's constructor (``CallFacts.moved_after``).
A caller that moves first, a CPU caller, or one that never moves it: silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

UTILS = '''\
import torch


def build_optimizer(model, lr):
    return torch.optim.SGD(model.parameters(), lr=lr)
'''

TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from utils import build_optimizer


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4)
    optimizer = build_optimizer(model, 0.1)
    model = model.to(device)
    for x in loader:
        model(x).sum().backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_the_helpers_optimizer_before_the_callers_move(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "train.py": TRAIN})
    assert lint_all(tmp_path) == {("utils.py", 5, "XLA405")}
    project.clear_cache()
    assert lint(tmp_path, "utils.py") == {("utils.py", 5, "XLA405")}


@pytest.mark.parametrize("train", [
    # moved first, then the optimizer
    TRAIN.replace("    optimizer = build_optimizer(model, 0.1)\n    model = model.to(device)\n",
                  "    model = model.to(device)\n    optimizer = build_optimizer(model, 0.1)\n"),
    # built on the device
    TRAIN.replace("torch.nn.Linear(4, 4)", "torch.nn.Linear(4, 4).to(device)").replace(
        "    model = model.to(device)\n", ""),
])
def test_a_module_on_the_device_at_the_call_is_silent(tmp_path, train):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "train.py": train})
    assert lint_all(tmp_path) == set()


def test_a_cpu_script_moving_after_the_call_is_silent(tmp_path):
    cpu = '''\\
import torch

from utils import build_optimizer

if __name__ == "__main__":
    model = torch.nn.Linear(4, 4)
    optimizer = build_optimizer(model, 0.1)
    model = model.to("cuda")
'''
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "cpu.py": cpu})
    assert lint_all(tmp_path) == set()

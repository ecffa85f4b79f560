"""XLA206 in a launching script whose model's dropout is in another module (issue 28, session 12).

The script seeds only the CPU generator (``torch.manual_seed``) and builds a model of another
module whose block (a class that model builds) has ``nn.Dropout(0.1)``: the dropout masks
are drawn on the device, unseeded. With ``torch_xla.manual_seed`` too, or a rate of 0, silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

MODEL = '''\
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(self.fc(x))


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.Sequential(Block(dim), Block(dim))

    def forward(self, x):
        return self.blocks(x)
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from model import Net


def _mp_fn(index, loader):
    torch.manual_seed(0)
    model = Net(4).to(torch_xla.device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x).sum().backward()
        xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_the_scripts_seed_with_dropout_in_another_module(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "model.py": MODEL, "run.py": RUN})
    assert lint_all(tmp_path) == {("run.py", 9, "XLA206")}
    project.clear_cache()
    assert lint(tmp_path, "run.py") == {("run.py", 9, "XLA206")}


@pytest.mark.parametrize("model, run", [
    (MODEL, RUN.replace("    torch.manual_seed(0)\n", "    torch.manual_seed(0)\n    torch_xla.manual_seed(0)\n")),
    (MODEL.replace("nn.Dropout(0.1)", "nn.Dropout(0.0)"), RUN),
])
def test_a_seeded_device_or_no_dropout_is_silent(tmp_path, model, run):
    write(tmp_path, {"pyproject.toml": "", "model.py": model, "run.py": run})
    assert lint_all(tmp_path) == set()


#: the rate through constructor parameters (session 13): ``Net(dim, drop=0.1)`` builds
#: ``Block(dim, drop)``, whose ``nn.Dropout(drop)`` gets the default
PARAM_MODEL = MODEL.replace('''    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)''', '''    def __init__(self, dim, drop):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.drop = nn.Dropout(drop)''').replace('''    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.Sequential(Block(dim), Block(dim))''', '''    def __init__(self, dim, drop=0.1):
        super().__init__()
        self.blocks = nn.Sequential(Block(dim, drop), Block(dim, drop))''')


BUILDER = "\n\ndef build_net(dim):\n    return Net(dim)\n"


def test_a_rate_through_constructor_parameters(tmp_path):
    # the module builds Net with its default rate (build_net): Block's dropout is 0.1
    write(tmp_path, {"pyproject.toml": "", "model.py": PARAM_MODEL + BUILDER,
                     "run.py": RUN.replace("from model import Net", "from model import build_net").replace(
                         "Net(4)", "build_net(4)")})
    assert lint_all(tmp_path) == {("run.py", 9, "XLA206")}


def test_a_class_built_only_in_another_module_is_not_told(tmp_path):
    # run.py builds Net itself: what it passes for the rate (here 0.0) is not read
    write(tmp_path, {"pyproject.toml": "", "model.py": PARAM_MODEL,
                     "run.py": RUN.replace("Net(4)", "Net(4, drop=0.0)")})
    assert lint_all(tmp_path) == set()


@pytest.mark.parametrize("model", [
    PARAM_MODEL.replace("drop=0.1", "drop=0.0") + BUILDER,  # the default is no dropout
    PARAM_MODEL.replace("Block(dim, drop), Block(dim, drop)", "Block(dim, 0), Block(dim, 0)") + BUILDER,  # passed 0
])
def test_a_zero_rate_through_parameters_is_silent(tmp_path, model):
    write(tmp_path, {"pyproject.toml": "", "model.py": model, "run.py": RUN})
    assert lint_all(tmp_path) == set()

"""Shapes found in session 12's last blind set and attack (issue 28).

- A strategy object built in the module's own launched worker (``run(get_strategy("xla"),
  cfg)``) answers for ``strategy.m()`` in ``run``; the call in the CPU branch of the
  launching ``if`` says nothing of the XLA run (a blind set, v3).
- XLA206: a project helper that seeds the device generator counts whatever its name
  (``setup_device(seed)`` calling ``torch_xla.manual_seed``; a wrong finding of the attack).
- XLA302: an epoch loop calling another module's function whose own loop runs the step is
  not the step loop (a wrong finding of the attack).
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

STRATEGIES = '''\
def get_strategy(name):
    if name == "xla":
        from xla_strategy import XLAStrategy

        return XLAStrategy()
    from base_strategy import Strategy

    return Strategy()
'''

BASE_STRATEGY = '''\
class Strategy:
    def optimizer_step(self, opt):
        opt.step()
'''

XLA_STRATEGY = '''\
import torch_xla.core.xla_model as xm

from base_strategy import Strategy


class XLAStrategy(Strategy):
    def optimizer_step(self, opt):
        xm.optimizer_step(opt)
'''

LOOP = '''\
import torch

from strategies import get_strategy


def run(strategy, model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x).sum().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        strategy.optimizer_step(opt)


def _xla_worker(index, model, loader):
    run(get_strategy("xla"), model, loader)


def fit(cfg, model, loader):
    if cfg["strategy"] == "xla":
        import torch_xla

        torch_xla.launch(_xla_worker, args=(model, loader))
    else:
        run(get_strategy(cfg["strategy"]), model, loader)
'''


def test_the_strategy_the_launched_worker_builds(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "strategies.py": STRATEGIES, "base_strategy.py": BASE_STRATEGY,
                     "xla_strategy.py": XLA_STRATEGY, "loop.py": LOOP})
    # the clip before XLAStrategy.optimizer_step's xm.optimizer_step
    assert lint_all(tmp_path) == {("loop.py", 10, "XLA203")}


UTILS = '''\
import torch_xla


def setup_device(seed):
    torch_xla.manual_seed(seed)
    return torch_xla.device()
'''

MODELS = '''\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.fc(x))
'''

SEEDED = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from models import Net
from utils import setup_device


def _mp_fn(index, loader):
    torch.manual_seed(0)
    device = setup_device(0)
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x.to(device)).sum().backward()
        xm.optimizer_step(opt)
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_a_device_seeding_helper_of_any_name(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "models.py": MODELS, "run.py": SEEDED})
    assert lint_all(tmp_path) == set()
    project.clear_cache()
    write(tmp_path, {"utils.py": UTILS.replace("    torch_xla.manual_seed(seed)\n", "")})
    assert lint_all(tmp_path) == {("run.py", 10, "XLA206")}


DATA = '''\
import torch
from torch.utils.data import DataLoader


def build_loaders():
    val = DataLoader(torch.randn(64, 4), batch_size=8, drop_last=True)
    train = DataLoader(torch.randn(64, 4), batch_size=8, drop_last=True)
    return val, train
'''

ENGINE = '''\
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def fit(model, loader, opt):
    for x in pl.MpDeviceLoader(loader, torch_xla.device()):
        opt.zero_grad()
        model(x).sum().backward()
        xm.optimizer_step(opt)
'''

EPOCHS = '''\
import torch
import torch_xla

from data import build_loaders
from engine import fit


def _mp_fn(index):
    model = torch.nn.Linear(4, 2).to(torch_xla.device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    val, train = build_loaders()
    for epoch in range(2):
        fit(model, train, opt)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_an_epoch_loop_calling_another_modules_step_loop_is_no_step_loop(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "data.py": DATA, "engine.py": ENGINE, "run.py": EPOCHS})
    assert lint_all(tmp_path) == set()

"""Kinds a fresh-scripts check (2026-12-01) found missed or falsely reported across module
and function boundaries, each as the smallest project that shows it: a dead config flag of
another module, callbacks held in lists in one module, an imported helper called from the
step, a model from a builder (also one that binds before it returns), a constant world size."""

from __future__ import annotations

import pytest

from test_project_mode import lint, lint_all, write


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


STEP = '''\
import torch
import torch_xla
{imports}


def main(index):
    device = torch_xla.device()
    w = torch.zeros(4, device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    {setup}
    for step in range(10):
        loss = (w * 2).sum()
        loss.backward()
        opt.step()
        {body}
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(main)
'''


def step(imports="", setup="pass", body="pass") -> str:
    return STEP.format(imports=imports, setup=setup, body=body)


def codes(found, code):
    return {f for f in found if f[2] == code}


def test_a_false_flag_of_a_config_module_is_dead_code(tmp_path):
    train = step("import config\nfrom config import VERBOSE, LOUD", body=(
        "if config.DEBUG:\n            print(loss.item())\n"
        "        if VERBOSE:\n            print(loss.item())\n"
        "        if LOUD:\n            print(loss.item())"))
    write(tmp_path, {"pyproject.toml": "", "config.py": "DEBUG = False\nVERBOSE = 0\nLOUD = True\n", "train.py": train})
    # only the flag that is on reads: DEBUG and VERBOSE are constants never rebound
    assert codes(lint_all(tmp_path), "XLA501") == {("train.py", 21, "XLA501")}


def test_a_rebound_config_flag_is_not_dead(tmp_path):
    train = step("import config", body="if config.DEBUG:\n            print(loss.item())")
    cfg = "DEBUG = False\n\ndef enable():\n    global DEBUG\n    DEBUG = True\n"
    write(tmp_path, {"pyproject.toml": "", "config.py": cfg, "train.py": train})
    assert codes(lint_all(tmp_path), "XLA501") == {("train.py", 16, "XLA501")}


CBS = '''\
class PrintCb:
    def on_step_end(self, step, loss):
        print(f"step {step} loss {loss.item():.4f}")


class CountCb:
    def on_step_end(self, step, loss):
        print(step + 1)
'''


def test_callbacks_in_a_list_of_the_same_module(tmp_path):
    train = step(setup="cbs = [PrintCb(), CountCb()]",
                 body="for cb in cbs:\n            cb.on_step_end(step, loss)") + "\n\n" + CBS
    write(tmp_path, {"pyproject.toml": "", "train.py": train})
    assert codes(lint_all(tmp_path), "XLA501") == {("train.py", 26, "XLA501")}


def test_callbacks_a_trainer_of_the_same_module_keeps(tmp_path):
    train = '''\
import torch
import torch_xla


class Trainer:
    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])
        self.device = torch_xla.device()

    def train(self):
        w = torch.zeros(4, device=self.device, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        for step in range(10):
            loss = (w * 2).sum()
            loss.backward()
            opt.step()
            for cb in self.callbacks:
                cb.on_step_end(step, loss)
            torch_xla.sync()


def main(index):
    Trainer([PrintCb()]).train()


if __name__ == "__main__":
    torch_xla.launch(main)


''' + CBS
    write(tmp_path, {"pyproject.toml": "", "train.py": train})
    assert codes(lint_all(tmp_path), "XLA501") == {("train.py", 32, "XLA501")}


def test_a_helper_of_another_module_called_in_the_step(tmp_path):
    helpers = "def log_loss(step, loss):\n    print(f'step {step} loss {loss.item():.4f}')\n\n\n" \
              "def log_step(step):\n    print(f'step {step}')\n"
    train = step("from helpers import log_loss, log_step", body="log_loss(step, loss)\n        log_step(step)")
    write(tmp_path, {"pyproject.toml": "", "helpers.py": helpers, "train.py": train})
    assert lint(tmp_path, "helpers.py") == {("helpers.py", 2, "XLA501")}


def test_a_helper_called_after_the_loop_is_no_step_code(tmp_path):
    helpers = "def log_loss(step, loss):\n    print(f'step {step} loss {loss.item():.4f}')\n"
    train = step("from helpers import log_loss").replace("        torch_xla.sync()\n",
                                                         "        torch_xla.sync()\n    log_loss(0, loss)\n")
    write(tmp_path, {"pyproject.toml": "", "helpers.py": helpers, "train.py": train})
    assert lint(tmp_path, "helpers.py") == set()


NET = '''\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)

    def forward(self, x, flag=False):
        if flag:
            x = x * 3
        if x.sum() > 0:
            x = x * 2
        return self.lin(x)


def build_model():
    model = Net()
    return model
'''


def test_a_model_from_a_builder_that_binds_then_returns(tmp_path):
    train = step("from net import build_model", setup="model = build_model().to(device)",
                 body="model(torch.randn(8, 4, device=device), True).sum()")
    write(tmp_path, {"pyproject.toml": "", "net.py": NET, "train.py": train})
    assert lint(tmp_path, "net.py") == {("net.py", 12, "XLA502")}  # `if flag:` is a Python bool


def test_a_model_handed_to_an_engine_called_on_loader_batches(tmp_path):
    engine = '''\
import torch_xla.core.xla_model as xm


def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        xm.optimizer_step(optimizer)
'''
    train = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from engine import train_one_epoch
from net import Net


def main(index, loader):
    device = torch_xla.device()
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_one_epoch(model, pl.MpDeviceLoader(loader, device), optimizer)


if __name__ == "__main__":
    torch_xla.launch(main, args=(None,))
'''
    write(tmp_path, {"pyproject.toml": "", "net.py": NET, "engine.py": engine, "train.py": train})
    assert lint(tmp_path, "net.py") == {("net.py", 12, "XLA502")}


def test_a_constant_world_size_given_to_a_sampler(tmp_path):
    train = '''\
import torch
import torch_xla
import torch_xla.runtime as xr
from torch.utils.data.distributed import DistributedSampler
import config

LOCAL = 8
ONE = 1


def main(index, ds):
    a = DistributedSampler(ds, num_replicas=LOCAL, rank=xr.global_ordinal())
    b = DistributedSampler(ds, num_replicas=config.WORLD_SIZE, rank=xr.global_ordinal())
    c = DistributedSampler(ds, num_replicas=ONE, rank=0)
    return a, b, c


if __name__ == "__main__":
    torch_xla.launch(main, args=(None,))
'''
    write(tmp_path, {"pyproject.toml": "", "config.py": "WORLD_SIZE = 8\n", "train.py": train})
    assert codes(lint_all(tmp_path), "XLA109") == {("train.py", 12, "XLA109"), ("train.py", 13, "XLA109")}

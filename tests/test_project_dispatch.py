"""Objects that cross a module boundary as parameters (project mode): a trainer holds the
callbacks its caller passes and calls their methods in its step loop; a callback receives
the trainer and calls its methods. Which methods run is decided by what the callers pass
(``ArgFacts`` of kind ``instance`` / ``instances``), never by a method's name alone."""

from __future__ import annotations

import textwrap

import pytest

from test_project_mode import lint, lint_all, write


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


ENGINE = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr


class Trainer:
    def __init__(self, model, loader, callbacks=()):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.loader = loader
        self.callbacks = list(callbacks)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def is_world_process_zero(self):
        return xr.global_ordinal() == 0

    def save_model(self, path):
        xm.save(self.model.state_dict(), path)

    def train(self):
        for epoch in range(3):
            for step, (x, y) in enumerate(pl.MpDeviceLoader(self.loader, self.device)):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                xm.optimizer_step(self.optimizer)
                for cb in self.callbacks:
                    cb.on_step_end(self, step, loss)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, loss)
'''

CALLBACKS = '''\
class Callback:
    def on_step_end(self, trainer, step, loss):
        pass

    def on_epoch_end(self, trainer, epoch, loss):
        pass


class Printer(Callback):
    def on_step_end(self, trainer, step, loss):
        print(loss.item())

    def on_epoch_end(self, trainer, epoch, loss):
        print(loss.item())


class Logger(Callback):
    def on_step_end(self, trainer, step, loss):
        if step % 10 == 0:
            print(float(loss))


class Saver(Callback):
    def on_epoch_end(self, trainer, epoch, loss):
        if trainer.is_world_process_zero():
            trainer.save_model(f"ckpt-{epoch}.pt")


class Unused(Callback):
    def on_step_end(self, trainer, step, loss):
        print(loss.item())
'''

TRAIN = '''\
import torch
import torch_xla
from callbacks import Logger, Printer, Saver
from engine import Trainer


def _mp_fn(index, loader):
    model = torch.nn.Linear(4, 4)
    Trainer(model, loader, callbacks=[Printer(), Logger(), Saver()]).train()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''

EXPECTED = {
    ("callbacks.py", 11, "XLA501"),  # Printer.on_step_end: the device loss, every step
    ("callbacks.py", 20, "XLA507"),  # Logger.on_step_end: under its own step gate
    ("callbacks.py", 26, "XLA602"),  # Saver: trainer.save_model under the trainer's rank test
}


def test_callbacks_held_by_the_trainer_run_in_its_step(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "engine.py": ENGINE, "callbacks.py": CALLBACKS, "train.py": TRAIN})
    found = {f for f in lint_all(tmp_path) if f[0] == "callbacks.py"}
    # Printer.on_epoch_end (line 14) runs once per epoch: no step read; Unused (line 31) is
    # never passed to a trainer; the base's empty methods read nothing
    assert found == EXPECTED
    assert {f for f in lint(tmp_path, "callbacks.py")} == EXPECTED  # alone, by its path


def test_unknown_callbacks_stay_silent(tmp_path):
    # one element of the list is no project class: what the trainer holds is unknown
    train = TRAIN.replace("[Printer(), Logger(), Saver()]", "[Printer(), Logger(), Saver(), object()]")
    write(tmp_path, {"pyproject.toml": "", "engine.py": ENGINE, "callbacks.py": CALLBACKS, "train.py": train})
    assert {f for f in lint_all(tmp_path) if f[0] == "callbacks.py"} == set()


def test_a_callback_called_outside_the_step_is_no_step_code(tmp_path):
    engine = ENGINE.replace("                for cb in self.callbacks:\n                    cb.on_step_end(self, step, loss)\n", "")
    engine = engine.replace("            for cb in self.callbacks:\n                cb.on_epoch_end(self, epoch, loss)\n",
                            "            for cb in self.callbacks:\n                cb.on_epoch_end(self, epoch, loss)\n"
                            "                cb.on_step_end(self, epoch, loss)\n")
    write(tmp_path, {"pyproject.toml": "", "engine.py": engine, "callbacks.py": CALLBACKS, "train.py": TRAIN})
    assert {f for f in lint_all(tmp_path) if f[0] == "callbacks.py"} == {("callbacks.py", 26, "XLA602")}


def test_dispatch_facts_of_the_trainer(tmp_path):
    from flake8_xla.project import _project, summary_of
    from flake8_xla.settings import Settings

    write(tmp_path, {"pyproject.toml": "", "engine.py": ENGINE, "callbacks.py": CALLBACKS, "train.py": TRAIN})
    files = _project(tmp_path.resolve())
    s = summary_of((tmp_path / "engine.py").resolve(), files, Settings())
    got = {(d.origin, d.param, d.element, d.method, d.line, d.in_step, d.gated) for d in s.dispatches}
    assert got == {
        ("Trainer.__init__", "model", False, "to", 11, False, False),
        ("Trainer.__init__", "callbacks", True, "on_step_end", 29, True, False),
        ("Trainer.__init__", "callbacks", True, "on_epoch_end", 31, False, False),
    }
    step = next(d for d in s.dispatches if d.method == "on_step_end")
    assert [a.kind for a in step.args] == ["instance", "unknown", "device_tensor"]
    assert step.args[0].refs == ((str((tmp_path / "engine.py").resolve()), "Trainer"),)


SAVE_UTILS = '''\
import torch_xla.core.xla_model as xm


def save_ckpt(model, path):
    xm.save(model.state_dict(), path)


class CheckpointSaver:
    def save(self, model, path):
        xm.save(model.state_dict(), path)
'''

SAVE_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from save_utils import CheckpointSaver, save_ckpt


def _mp_fn(index):
    model = torch.nn.Linear(2, 2).to(torch_xla.device())
    if xm.is_master_ordinal():
        save_ckpt(model, "a.pt")
    saver = CheckpointSaver()
    if xm.is_master_ordinal():
        saver.save(model, "b.pt")
    save_ckpt(model, "c.pt")
    if index % 8 == 0:
        save_ckpt(model, "d.pt")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_xla602_on_the_guarded_call_of_an_imported_helper(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "save_utils.py": SAVE_UTILS, "train.py": SAVE_TRAIN})
    # the guarded calls only: the unguarded one runs everywhere, `index % 8` picks other writers
    assert lint_all(tmp_path) == {("train.py", 10, "XLA602"), ("train.py", 13, "XLA602")}


NET = '''\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, meta, flag):
        if torch.isnan(meta).any():
            meta = torch.nan_to_num(meta)
        if flag:
            x = x * 2
        return self.fc(x) + meta


def build_model():
    return Net()
'''

LOOP = '''\
def train_fn(loader, model, optimizer, device, xm):
    for x, meta in loader:
        x, meta = x.to(device), meta.to(device)
        loss = model(x, meta, True).sum()
        loss.backward()
        xm.optimizer_step(optimizer)
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
from net import build_model
from loop import train_fn

MX = xmp.MpModelWrapper(build_model())


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = MX.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_fn(loader, model, optimizer, device, xm)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(None,))
'''


def test_forward_of_a_model_handed_to_a_helper_gets_device_tensors(tmp_path):
    # run.py moves the model built by net.build_model() (through MpModelWrapper) to the
    # device and hands it to loop.train_fn, which calls it with tensors it moved: forward's
    # `meta` is a device tensor (XLA502 on the NaN test); `flag` is a Python bool (silent)
    write(tmp_path, {"pyproject.toml": "", "net.py": NET, "loop.py": LOOP, "run.py": RUN})
    assert {f for f in lint_all(tmp_path) if f[0] == "net.py"} == {("net.py", 11, "XLA502")}
    assert lint(tmp_path, "net.py") == {("net.py", 11, "XLA502")}


def test_forward_of_a_model_left_on_the_host_is_unknown(tmp_path):
    run = RUN.replace("model = MX.to(device)", "model = build_model()")
    write(tmp_path, {"pyproject.toml": "", "net.py": NET, "loop.py": LOOP, "run.py": run})
    assert {f for f in lint_all(tmp_path) if f[0] == "net.py"} == set()


def test_builder_functions_in_the_light_index(tmp_path):
    from flake8_xla.project.defs import returns_class
    from flake8_xla.project.files import ProjectFiles

    write(tmp_path, {"pyproject.toml": "", "net.py": NET + textwrap.dedent('''
        def either(flag):
            if flag:
                return Net()
            return nn.Linear(2, 2)


        def gen():
            yield Net()
        ''')})
    files = ProjectFiles(tmp_path.resolve())
    net = str((tmp_path / "net.py").resolve())
    assert returns_class((net, "build_model"), files) == (net, "Net")
    assert returns_class((net, "either"), files) is None  # two classes: mixed
    assert returns_class((net, "gen"), files) is None


CONFIG = '''\
DROPOUT = 0.3
NO_DROPOUT = 0.0
HIDDEN = 64
LR = -1
'''

DROP_NET = '''\
import torch
from torch import nn

import config


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, config.HIDDEN)
        self.drop = nn.Dropout(config.DROPOUT)

    def forward(self, x):
        return self.drop(self.fc(x))
'''

SEEDS = '''\
import random

import numpy as np
import torch


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
'''

DROP_RUN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from net import Net
from seeds import seed_everything


def _mp_fn(index, loader):
    seed_everything(0)
    device = torch_xla.device()
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x.to(device)).sum().backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


def test_seed_in_a_helper_module_with_dropout_in_the_model_module(tmp_path):
    # the dropout rate is a constant of config.py; NumPy's and random's seeders are no
    # imported helper that seeds the device
    write(tmp_path, {"pyproject.toml": "", "config.py": CONFIG, "net.py": DROP_NET, "seeds.py": SEEDS,
                     "run.py": DROP_RUN})
    assert {f for f in lint_all(tmp_path) if f[1:] == (10, "XLA206")} == {("seeds.py", 10, "XLA206")}
    assert lint(tmp_path, "seeds.py") == {("seeds.py", 10, "XLA206")}


def test_a_zero_dropout_rate_in_a_config_module_draws_nothing(tmp_path):
    net = DROP_NET.replace("config.DROPOUT", "config.NO_DROPOUT")
    write(tmp_path, {"pyproject.toml": "", "config.py": CONFIG, "net.py": net, "seeds.py": SEEDS, "run.py": DROP_RUN})
    assert lint(tmp_path, "seeds.py") == set()


def test_module_constants_in_the_light_index(tmp_path):
    from flake8_xla.project.defs import constant
    from flake8_xla.project.files import ProjectFiles

    write(tmp_path, {"pyproject.toml": "", "config.py": CONFIG + textwrap.dedent('''
        LATER = 1
        LATER = 2
        BUMPED = 3
        def bump():
            global BUMPED
            BUMPED += 1
        NAME = "x"
        ''')})
    files = ProjectFiles(tmp_path.resolve())
    cfg = str((tmp_path / "config.py").resolve())
    assert constant((cfg, "DROPOUT"), files) == (True, 0.3)
    assert constant((cfg, "LR"), files) == (True, -1)
    assert constant((cfg, "NAME"), files) == (True, "x")
    assert constant((cfg, "LATER"), files) == (False, None)  # bound twice
    assert constant((cfg, "BUMPED"), files) == (False, None)  # written by a function
    assert constant((cfg, "missing"), files) == (False, None)

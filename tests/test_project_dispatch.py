"""Objects that cross a module boundary as parameters (project mode): a trainer holds the
callbacks its caller passes and calls their methods in its step loop; a callback receives
the trainer and calls its methods. Which methods run is decided by what the callers pass
(``ArgFacts`` of kind ``instance`` / ``instances``), never by a method's name alone."""

from __future__ import annotations

import textwrap

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write


@pytest.fixture(autouse=True)
def fresh_cache():
    project.clear_cache()
    yield
    project.clear_cache()


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

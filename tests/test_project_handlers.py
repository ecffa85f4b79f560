"""Project mode: callbacks fired through a handler object (issue 28: values into
parameters, calls on objects kept in attributes). The learner keeps a ``CallbackHandler``
built from the callbacks its caller passed; the handler's methods loop over them. What the
script passes reaches the handler through the learner's parameter (a parameter handed on as
it came is what its function's callers pass), the handler's methods run once per step where
the learner's step loop calls them, and the learner itself (``self``) is the object each
callback receives."""

from __future__ import annotations

import pytest

from test_project_mode import lint, lint_all, write

#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")

EVENTS = '''\
class Callback:
    order = 0

    def on_step_end(self, learn):
        pass


class CallbackHandler:
    def __init__(self, callbacks=()):
        self.callbacks = sorted(callbacks, key=lambda cb: cb.order)

    def on_step_end(self, learn):
        for cb in self.callbacks:
            cb.on_step_end(learn)
'''

LEARNER = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from .events import CallbackHandler


class Learner:
    def __init__(self, model, loader, callbacks=()):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.loader = loader
        self.cbs = CallbackHandler(callbacks)
        self.loss = None

    def fit(self):
        for x, y in pl.MpDeviceLoader(self.loader, self.device):
            self.loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.loss.backward()
            xm.optimizer_step(self.opt)
            self.cbs.on_step_end(self)
'''

CALLBACKS = '''\
import torch

from .events import Callback


class NaNGuard(Callback):
    def on_step_end(self, learn):
        if not torch.isfinite(learn.loss):
            raise RuntimeError("non-finite loss")


class Meter(Callback):
    def __init__(self):
        self.total = 0.0

    def on_step_end(self, learn):
        if learn.loss is not None:
            self.total += learn.loss.item()


class Gated(Callback):
    def __init__(self):
        self.n = 0

    def on_step_end(self, learn):
        self.n += 1
        if self.n % 10 == 0:
            print(f"loss {learn.loss:.3f}")
'''

TRAIN = '''\
import torch
import torch_xla

from lib.callbacks import Gated, Meter, NaNGuard
from lib.learner import Learner


def _mp_fn(index, loader):
    learn = Learner(torch.nn.Linear(4, 1), loader, callbacks=[NaNGuard(), Meter(), Gated()])
    learn.fit()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''

WANT = {("lib/callbacks.py", 8, "XLA502"), ("lib/callbacks.py", 18, "XLA501"), ("lib/callbacks.py", 28, "XLA507")}


def project(base, train: str = TRAIN) -> None:
    write(base, {"pyproject.toml": "", "lib/__init__.py": "", "lib/events.py": EVENTS, "lib/learner.py": LEARNER,
                 "lib/callbacks.py": CALLBACKS, "train.py": train})


def test_callbacks_the_learner_hands_to_its_handler_run_in_the_step(tmp_path):
    project(tmp_path)
    # NaNGuard tests the learner's device loss (XLA502) and Meter reads it (XLA501), each
    # once per step: the handler's on_step_end runs in the learner's step loop; `learn.loss
    # is not None` reads nothing; Gated formats it every 10 steps (XLA507)
    assert lint_all(tmp_path) == WANT
    assert lint(tmp_path, "lib/callbacks.py") == WANT


def test_callbacks_fired_outside_the_step_are_not_step_code(tmp_path):
    project(tmp_path)
    text = (tmp_path / "lib/learner.py").read_text()
    # fired once after the loop: no per-step read
    (tmp_path / "lib/learner.py").write_text(text.replace("            self.cbs.on_step_end(self)\n",
                                                          "        self.cbs.on_step_end(self)\n"))
    assert lint_all(tmp_path) == set()


def test_an_unknown_list_of_callbacks_says_nothing(tmp_path):
    # the callbacks come from a parameter of the launched function: unknown classes
    project(tmp_path, TRAIN.replace("callbacks=[NaNGuard(), Meter(), Gated()]", "callbacks=loader"))
    assert lint_all(tmp_path) == set()

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


# -- fired by name: getattr(cb, event)(*args) ------------------------------------------------

LIST = '''\
class CallbackList:
    def __init__(self, callbacks=()):
        self._cbs = list(callbacks)

    def add(self, cb):
        self._cbs.append(cb)

    def fire(self, event, *args):
        for cb in self._cbs:
            getattr(cb, event)(*args)
'''

BASE = '''\
from .callbacks import CallbackList


class BaseTrainer:
    def __init__(self, model, loader, optimizer, callbacks=()):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer
        self.callbacks = CallbackList(callbacks)

    def add_callback(self, cb):
        self.callbacks.add(cb)

    def train(self):
        self.callbacks.fire("on_train_begin", self)
        for step, (x, y) in enumerate(self.loader):
            loss = self.model(x).sum()
            loss.backward()
            self.optimizer.step()
            self.callbacks.fire("on_step_end", self, step, loss)
'''

TPU_TRAINER = '''\
import torch_xla.core.xla_model as xm

from .base import BaseTrainer


class TPUTrainer(BaseTrainer):
    def __init__(self, model, loader, optimizer, callbacks=()):
        super().__init__(model, loader, optimizer, callbacks)
'''

PLUGINS = '''\
class Spike:
    def on_train_begin(self, trainer):
        self.prev = None

    def on_step_end(self, trainer, step, loss):
        if loss > 10:
            print("spike at", step)


class Quiet:
    def on_train_begin(self, trainer):
        pass

    def on_step_end(self, trainer, step, loss):
        pass


DEFAULT = (Spike, Quiet)
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.nn.parallel import DistributedDataParallel as DDP

from lib.plugins import DEFAULT
from lib.tpu import TPUTrainer


class Reader:
    def on_train_begin(self, trainer):
        pass

    def on_step_end(self, trainer, step, loss):
        print(loss.item())


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = DDP(torch.nn.Linear(4, 1).to(device), gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = TPUTrainer(model, pl.MpDeviceLoader(loader, device), optimizer, callbacks=[cls() for cls in DEFAULT])
    trainer.add_callback(Reader())
    trainer.train()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''

FIRED = {("lib/plugins.py", 6, "XLA502"), ("run.py", 15, "XLA501")}


def fired_project(base, run: str = RUN) -> None:
    write(base, {"pyproject.toml": "", "lib/__init__.py": "", "lib/callbacks.py": LIST, "lib/base.py": BASE,
                 "lib/tpu.py": TPU_TRAINER, "lib/plugins.py": PLUGINS, "run.py": run})


def test_callbacks_fired_by_event_name_through_a_handler(tmp_path):
    # the plugins of a tuple of classes, built by a comprehension, handed through the
    # subclass's super().__init__ to the base's CallbackList; a callback added with
    # add_callback joins the same list; fire("on_step_end", self, step, loss) in the base's
    # step loop runs each one's on_step_end with the device loss: Spike tests it (XLA502),
    # Reader reads it (XLA501); fire("on_train_begin", self) runs before the loop: nothing
    fired_project(tmp_path)
    assert lint_all(tmp_path) == FIRED
    assert lint(tmp_path, "lib/plugins.py") == {("lib/plugins.py", 6, "XLA502")}
    assert lint(tmp_path, "run.py") == {("run.py", 15, "XLA501")}


def test_an_event_fired_outside_the_step_is_not_step_code(tmp_path):
    # the same callbacks fired with on_step_end only after the loop: no per-step read
    base = BASE.replace('            self.callbacks.fire("on_step_end", self, step, loss)\n',
                        "").replace('        self.callbacks.fire("on_train_begin", self)\n',
                                    '        loss = None\n        step = 0\n')
    base += '        self.callbacks.fire("on_step_end", self, step, loss)\n'
    fired_project(tmp_path)
    (tmp_path / "lib/base.py").write_text(base)
    assert lint_all(tmp_path) == set()


HANDLER_ARG = '''\
class Handler:
    def __init__(self, callbacks=None):
        self.callbacks = list(callbacks or [])

    def fire(self, event, trainer, **kwargs):
        for cb in self.callbacks:
            hook = getattr(cb, event, None)
            if hook is not None:
                hook(trainer, **kwargs)
'''

LOOP_ARG = '''\
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, model, optimizer, loader, handler):
        self.model, self.optimizer, self.loader, self.handler = model, optimizer, loader, handler

    def fit(self):
        for x, y in self.loader:
            loss = self.model(x).sum()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            self.handler.fire("on_step_end", self, loss=loss.detach())
'''

CBS_ARG = '''\
class Printer:
    def on_step_end(self, trainer, loss):
        print(f"loss {loss:.3f}")
'''

TRAIN_ARG = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from cbs import Printer
from handler import Handler
from loop import Trainer


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    Trainer(model, opt, pl.MpDeviceLoader(loader, device), Handler([Printer()])).fit()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


def test_a_handler_handed_to_the_trainer_fires_hooks_by_name_with_keywords(tmp_path):
    # the handler is the trainer's parameter; its fire() looks the hook up with getattr(cb,
    # event, None) and hands on **kwargs: Printer.on_step_end gets the step's device loss
    # as `loss=` and formats it every step (an f-string in a print is a read: XLA501)
    write(tmp_path, {"pyproject.toml": "", "handler.py": HANDLER_ARG, "loop.py": LOOP_ARG, "cbs.py": CBS_ARG,
                     "train.py": TRAIN_ARG})
    assert lint_all(tmp_path) == {("cbs.py", 3, "XLA501")}
    assert lint(tmp_path, "cbs.py") == {("cbs.py", 3, "XLA501")}


GATED_EVENTS = EVENTS.replace("""    def __init__(self, callbacks=()):
        self.callbacks = sorted(callbacks, key=lambda cb: cb.order)

    def on_step_end(self, learn):
        for cb in self.callbacks:
            cb.on_step_end(learn)""", """    def __init__(self, callbacks=()):
        self.callbacks = sorted(callbacks, key=lambda cb: cb.order)
        self.count = 0

    def on_step_end(self, learn):
        self.count += 1
        if self.count % 100 == 0:
            for cb in self.callbacks:
                cb.on_step_end(learn)""")


def test_a_gate_inside_the_handler_gates_its_callbacks(tmp_path):
    # the handler fires every 100 steps: NaNGuard's test is gated (XLA502 reports every step
    # only), Meter's read is a gated read (XLA507), Gated's own gate too
    assert GATED_EVENTS != EVENTS
    project(tmp_path)
    (tmp_path / "lib/events.py").write_text(GATED_EVENTS)
    assert lint_all(tmp_path) == {("lib/callbacks.py", 18, "XLA507"), ("lib/callbacks.py", 28, "XLA507")}


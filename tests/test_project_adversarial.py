"""False positives an adversarial review (2026-12-01) built against project mode's objects
passed as parameters, helper saves, project seeds and constants: each the smallest project
that showed it, now silent (or the right message)."""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


SAVE_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from ckpt import save_checkpoint


def _mp_fn(index):
    model = torch.nn.Linear(2, 2).to(torch_xla.device())
    if {test}:
        save_checkpoint(model, "ckpt")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''

CKPT = '''\
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def save_checkpoint(model, path):
    xm.save(model.state_dict(), path{args})
'''


@pytest.mark.parametrize("test,args,expected", [
    ("xm.is_master_ordinal()", ", master_only=False", set()),  # the helper picks its writers
    ("xm.is_master_ordinal()", "", {"redundant"}),
    ("xr.global_ordinal() == 0", "", {"by hand"}),
    ("xr.global_ordinal() == 0", ", global_master=True", {"redundant"}),  # not "pass global_master=True"
])
def test_xla602_reads_the_helpers_own_save_arguments(tmp_path, test, args, expected):
    write(tmp_path, {"pyproject.toml": "", "ckpt.py": CKPT.format(args=args), "train.py": SAVE_TRAIN.format(test=test)})
    found = [f for f in _findings(tmp_path) if f[2] == "XLA602"]
    assert {("redundant" if "redundant" in m else "by hand") for _, _, _, m in found} == expected
    assert all(line == 11 for _, line, _, _ in found)


def _findings(base):
    import ast
    import os

    from flake8_xla import engine
    from flake8_xla.settings import Settings

    out = []
    old = os.getcwd()
    os.chdir(base)
    try:
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).as_posix()
            text = path.read_text(encoding="utf-8")
            out += [(rel, f.line, f.code, f.message) for f in engine.run(ast.parse(text), Settings(), text, filename=rel)]
    finally:
        os.chdir(old)
    return out


ENGINE = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


class Trainer:
    def __init__(self, callbacks):
        self.callbacks = list(callbacks)
        self.model = torch.nn.Linear(2, 2).to(torch_xla.device())

    def {method}(self):
        return {body}

    def save_model(self, path):
        xm.save(self.model.state_dict(), path)

    def train(self):
        for epoch in range(3):
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
'''

CALLBACKS = '''\
class Saver:
    def on_epoch_end(self, trainer, epoch):
        if trainer.{method}():
            trainer.save_model(f"ckpt-{{epoch}}.pt")
'''

TRAIN = '''\
import torch_xla
from callbacks import Saver
from engine import Trainer


def _mp_fn(index):
    Trainer([Saver()]).train()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


@pytest.mark.parametrize("method,body,fires", [
    ("is_world_process_zero", "xr.global_ordinal() % 8 == 0", False),  # one writer per host: chosen
    ("is_world_process_zero", "self.should_save", False),  # unknown
    ("is_zero", "xr.global_ordinal() == 0", True),  # the body decides, not the name
])
def test_a_project_trainers_rank_method_is_read_by_its_body(tmp_path, method, body, fires):
    write(tmp_path, {"pyproject.toml": "", "engine.py": ENGINE.format(method=method, body=body),
                     "callbacks.py": CALLBACKS.format(method=method), "train.py": TRAIN})
    found = {f for f in lint_all(tmp_path) if f[2] == "XLA602"}
    assert found == ({("callbacks.py", 4, "XLA602")} if fires else set())


NET = '''\
from torch import nn

import config


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(config.DROPOUT)

    def forward(self, x):
        return self.drop(x)
'''

SEEDS = "import torch\n\n\ndef seed_everything(seed):\n    torch.manual_seed(seed)\n"

RUN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import config
from net import Net
from seeds import seed_everything


def _mp_fn(index, loader):
    {before}
    seed_everything(0)
    {after}
    device = torch_xla.device()
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x.to(device)).sum().backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


@pytest.mark.parametrize("before,after,fires", [
    ("pass", "pass", True),
    ("pass", "torch_xla.manual_seed(0)", False),  # the launched code seeds the device itself
    ("config.DROPOUT = 0.0", "pass", False),  # the constant is overridden: not a constant
])
def test_xla206_in_a_seed_helper_module(tmp_path, before, after, fires):
    write(tmp_path, {"pyproject.toml": "", "config.py": "DROPOUT = 0.3\n", "net.py": NET, "seeds.py": SEEDS,
                     "run.py": RUN.format(before=before, after=after)})
    found = {f for f in lint_all(tmp_path) if f[2] == "XLA206"}
    assert found == ({("seeds.py", 5, "XLA206")} if fires else set())


def test_xla206_not_for_a_program_that_only_evaluates(tmp_path):
    run = RUN.format(before="pass", after="pass").replace(
        "        model(x.to(device)).sum().backward()\n        xm.optimizer_step(optimizer)\n",
        "        with torch.no_grad():\n            model(x.to(device))\n")
    write(tmp_path, {"pyproject.toml": "", "config.py": "DROPOUT = 0.3\n", "net.py": NET, "seeds.py": SEEDS, "run.py": run})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA206"} == set()


DISPATCH_ENGINE = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, callbacks):
        self.callbacks = list(callbacks)

    def train(self, loader, model, optimizer):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            xm.optimizer_step(optimizer)
            for cb in self.callbacks:
                cb.on_step_end(loss)
'''

ALIAS_CALLBACKS = '''\
class Callback:
    def on_step_end(self, loss):
        pass


class Printer(Callback):
    def on_step_end(self, loss):
        print(loss.item())


class Quiet(Printer):
    on_step_end = Callback.on_step_end
'''


def test_a_method_replaced_by_a_class_attribute_is_not_followed(tmp_path):
    train = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from callbacks import Quiet
from engine import Trainer


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(2, 2).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    Trainer([Quiet()]).train(pl.MpDeviceLoader(loader, device), model, opt)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''
    write(tmp_path, {"pyproject.toml": "", "engine.py": DISPATCH_ENGINE, "callbacks.py": ALIAS_CALLBACKS, "train.py": train})
    assert {f for f in lint_all(tmp_path) if f[0] == "callbacks.py"} == set()
    write(tmp_path, {"train.py": train.replace("Quiet", "Printer")})
    project.clear_cache()
    assert {f for f in lint_all(tmp_path) if f[0] == "callbacks.py"} == {("callbacks.py", 8, "XLA501")}


def test_a_builder_that_rebinds_the_class_name_builds_nothing_known(tmp_path):
    from flake8_xla.project.defs import returns_class
    from flake8_xla.project.files import ProjectFiles

    write(tmp_path, {"pyproject.toml": "", "net.py": "class Net:\n    pass\n\n\nclass Other:\n    pass\n\n\n"
                     "def build():\n    Net = Other\n    return Net()\n\n\ndef build2():\n    m = Net()\n    return m\n"})
    files = ProjectFiles(tmp_path.resolve())
    net = str((tmp_path / "net.py").resolve())
    assert returns_class((net, "build"), files) is None
    assert returns_class((net, "build2"), files) == (net, "Net")


# --- never read outside the project root (issue 30.3) -----------------------------------

LINKED_TRAIN = '''\
import torch_xla
import torch_xla.core.xla_model as xm
from ext.helpers import step
from ext import helpers
import linked


def _mp_fn(index):
    step()
    helpers.step()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_project_mode_never_opens_a_file_outside_the_root(tmp_path, monkeypatch):
    """`ext` is a symlinked folder and `linked.py` a symlinked file, both pointing outside the
    project: project mode resolved the imports through them lexically (`root/ext/helpers.py`
    is "inside") and read the files outside. Now each path is resolved before it is opened,
    and nothing outside the root is opened (every read of the project layer is recorded)."""
    import builtins
    import os

    from flake8_xla.project import files as files_mod

    outside, proj = tmp_path / "outside", tmp_path / "proj"
    write(outside, {"helpers.py": "import torch_xla.core.xla_model as xm\ndef step():\n    xm.mark_step()\n",
                    "other.py": "import torch_xla.core.xla_model as xm\nxm.mark_step()\n"})
    write(proj, {"pyproject.toml": "", "train.py": LINKED_TRAIN, "inside.py": "x = 1\n"})
    (proj / "ext").symlink_to(outside, target_is_directory=True)
    (proj / "linked.py").symlink_to(outside / "other.py")
    opened = []
    real_read, real_open = files_mod.read_regular, builtins.open
    monkeypatch.setattr(files_mod, "read_regular", lambda p: (opened.append(os.path.realpath(p)), real_read(p))[1])
    monkeypatch.setattr(builtins, "open", lambda p, *a, **k: (
        opened.append(os.path.realpath(p)) if isinstance(p, (str, os.PathLike)) else None, real_open(p, *a, **k))[1])
    lint(proj, "train.py")
    lint(proj, "inside.py")
    monkeypatch.undo()
    assert opened, "the recorder saw no read"
    assert any(p.startswith(os.path.realpath(proj) + os.sep) for p in opened)
    # (the package's own data files are read too: only what lies behind the links must not be)
    assert [p for p in opened if p.startswith(os.path.realpath(outside) + os.sep)] == []
    assert files_mod.ProjectFiles(proj.resolve()).files() == [proj.resolve() / "inside.py", proj.resolve() / "train.py"]

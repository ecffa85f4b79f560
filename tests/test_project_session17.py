"""Session 17's project-mode pieces (issue 28), each with its traps.

- A folder below the project root that holds a root marker of its own (``pyproject.toml``,
  ``setup.cfg``, ``setup.py``, ``.git``: a vendored package, a submodule, a fixture project)
  is another project: the outer project's listing leaves it out, so each file belongs to
  the one project its own lint reads.
"""

from __future__ import annotations

import pytest

from flake8_xla.project.files import ProjectFiles, find_root
from test_project_mode import lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.cfg", "setup.py", ".git"])
def test_nested_project_left_out_of_the_listing(tmp_path, marker):
    write(tmp_path, {"pyproject.toml": "", "train.py": "", "pkg/__init__.py": "", "pkg/util.py": "",
                     f"vendor/lib/{marker}": "", "vendor/lib/a.py": "", "vendor/lib/deep/b.py": "",
                     "vendor/c.py": ""})
    files = ProjectFiles(tmp_path.resolve()).files()
    assert sorted(p.relative_to(tmp_path.resolve()).as_posix() for p in files) == [
        "pkg/__init__.py", "pkg/util.py", "train.py", "vendor/c.py"]
    # the nested project's own files are its own project, listed from its root
    inner = tmp_path.resolve() / "vendor/lib"
    assert find_root(inner / "deep/b.py") == inner
    assert sorted(p.relative_to(inner).as_posix() for p in ProjectFiles(inner).files()) == sorted(
        ["a.py", "deep/b.py"] + (["setup.py"] if marker == "setup.py" else []))


def test_git_folder_marks_a_nested_project(tmp_path):
    write(tmp_path, {"setup.py": "", "m.py": "", "sub/.git/HEAD": "", "sub/s.py": ""})
    files = ProjectFiles(tmp_path.resolve()).files()
    assert sorted(p.name for p in files) == ["m.py", "setup.py"]


# --- a function only named is not run: XLA003 before the launch ------------------------------

WORKERS = '''\
import functools

import torch
import torch_xla
import torch_xla.core.xla_model as xm


def _worker(lr, index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(10):
        model(torch.randn(8, 4, device=device)).sum().backward()
        xm.optimizer_step(opt)
        torch_xla.sync()


def make_worker(lr):
    return functools.partial(_worker, lr)


def pick_worker(lr):
    {body}
'''

LAUNCHER = '''\
import torch_xla

from workers import make_worker, pick_worker

if __name__ == "__main__":
    fn = {call}
    torch_xla.launch(fn)
'''


@pytest.mark.parametrize("body, call, expected", [
    # a partial of the worker: built before the launch, run in the launched processes
    ("return _worker", "make_worker(0.05)", set()),
    # the worker itself handed back (a name, not a call)
    ("return _worker", "pick_worker(0.05)", set()),
    # a helper that does touch the runtime before handing the partial back
    ("torch_xla.device()\n    return functools.partial(_worker, lr)", "pick_worker(0.05)",
     {("train.py", 6, "XLA003")}),
    # a nested def handed back: it runs where it is called (in the launched processes)
    ("def build():\n        return _worker(lr, 0)\n    return build", "pick_worker(0.05)", set()),
    # a helper that calls the worker (it runs now)
    ("_worker(lr, 0)\n    return _worker", "pick_worker(0.05)", {("train.py", 6, "XLA003")}),
])
def test_named_function_does_not_run_before_launch(tmp_path, body, call, expected):
    write(tmp_path, {"pyproject.toml": "", "workers.py": WORKERS.replace("{body}", body),
                     "train.py": LAUNCHER.replace("{call}", call)})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA003"} == expected


# --- a subclass's inherited method called in another module; super() along the object's MRO ---

MRO_BASE = '''\
import torch


class BaseLoop:
    def __init__(self, model):
        self.device = self.setup_device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.history = []

    def setup_device(self):
        return torch.device("cpu")

    def compute_loss(self, batch):
        raise NotImplementedError

    def after_step(self, loss):
        self.history.append(loss.item())

    def fit(self, loader):
        for batch in loader:
            loss = self.compute_loss(batch)
            loss.backward()
            self.optimizer.step()
            self.after_step(loss)
'''

MRO_MIXIN = '''\
import torch_xla
import torch_xla.core.xla_model as xm


class XlaMixin:
    def setup_device(self):
        return torch_xla.device()

    def after_step(self, loss):
        super().after_step(loss)
        torch_xla.sync()
'''

MRO_TASK = '''\
from .base import BaseLoop
from .xla_mixin import XlaMixin


class Trainer(XlaMixin, BaseLoop):
    def compute_loss(self, batch):
        x, y = batch["x"], batch["y"]
        keep = y > 0
        return (self.model(x)[keep] - y[keep]).pow(2).mean()
'''

MRO_DATA = '''\
import torch
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return {"x": torch.randn(4), "y": torch.randn(1)}


def build_loader(device):
    return pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8, drop_last=True), device)
'''

MRO_RUN = '''\
import torch
import torch_xla

from data import build_loader
from loops.task import Trainer


def main():
    trainer = Trainer(torch.nn.Linear(4, 1))
    trainer.fit(build_loader(trainer.device))


if __name__ == "__main__":
    main()
'''


def _mro_project(tmp_path, data=MRO_DATA, task=MRO_TASK):
    write(tmp_path, {"pyproject.toml": "", "loops/__init__.py": "", "loops/base.py": MRO_BASE,
                     "loops/xla_mixin.py": MRO_MIXIN, "loops/task.py": task, "data.py": data, "run.py": MRO_RUN})


def test_inherited_method_called_through_a_subclass_gets_the_callers_loader(tmp_path):
    # run.py calls trainer.fit(build_loader(...)) on a Trainer: fit is BaseLoop.fit, whose loop
    # draws from what build_loader returns (an MpDeviceLoader), so the batch the step hands
    # to Trainer.compute_loss is on the device: the mask indexing is XLA503
    _mro_project(tmp_path)
    assert lint_all(tmp_path) == {("loops/task.py", 9, "XLA503")}


def test_plain_loader_result_keeps_batches_on_the_host(tmp_path):
    _mro_project(tmp_path, data=MRO_DATA.replace(
        "return pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8, drop_last=True), device)",
        "return DataLoader(Pairs(), batch_size=8, drop_last=True)"))
    assert lint_all(tmp_path) == set()


def test_super_in_a_mixin_runs_the_next_class_of_the_objects_mro(tmp_path):
    from pathlib import Path

    from flake8_xla.project import _project, _reach_index
    from flake8_xla.settings import Settings
    _mro_project(tmp_path)
    files = _project(tmp_path.resolve())
    index = _reach_index(files, Settings())
    base = str((tmp_path / "loops/base.py").resolve())
    # XlaMixin.after_step's super().after_step() on a Trainer(XlaMixin, BaseLoop) is BaseLoop.after_step
    assert "BaseLoop.after_step" in index.get(base, {})
    assert Path(base).exists()

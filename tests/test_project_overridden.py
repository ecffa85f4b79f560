"""A base method every launched object overrides is not XLA code (session 13, blind sets w and y).

``base.py`` imports torch_xla and defines ``TrainBase`` whose ``save_checkpoint`` uses
``torch.save``; the launching script builds ``TrainDDP(TrainBase)``, which overrides it with
``xm.save``. The base loop runs on a ``TrainDDP`` (the reach knows the class), so the base
``save_checkpoint`` never runs: no XLA601 there, though its module imports torch_xla. A runner
module's CPU base class whose only launched subclass overrides ``save`` likewise. Without the
override the base method runs: XLA601.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

BASE = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm


class TrainBase:
    def __init__(self):
        self.device = torch_xla.device()
        self.model = torch.nn.Linear(4, 4).to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def save_checkpoint(self, epoch):
        torch.save(self.model.state_dict(), f"model-{epoch}.pt")

    def start_training(self, loader):
        for x in loader:
            self.model(x).sum().backward()
            xm.optimizer_step(self.optimizer)
        self.save_checkpoint(0)
'''

MAIN = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from base import TrainBase


class TrainDDP(TrainBase):
    def save_checkpoint(self, epoch):
        xm.save(self.model.state_dict(), f"model-{epoch}.pt")


def _mp_fn(index):
    TrainDDP().start_training([])


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_the_overridden_base_method_is_silent(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "base.py": BASE, "main.py": MAIN})
    assert lint_all(tmp_path) == set()
    project.clear_cache()
    assert lint(tmp_path, "base.py") == set()


def test_without_the_override_the_base_method_runs(tmp_path):
    main = MAIN.replace('''    def save_checkpoint(self, epoch):
        xm.save(self.model.state_dict(), f"model-{epoch}.pt")
''', "    pass\n")
    write(tmp_path, {"pyproject.toml": "", "base.py": BASE, "main.py": main})
    assert lint_all(tmp_path) == {("base.py", 13, "XLA601")}


def test_a_base_class_the_launch_builds_itself_keeps_its_findings(tmp_path):
    main = MAIN.replace("TrainDDP().start_training([])", "TrainDDP().start_training([])\n    TrainBase().start_training([])")
    write(tmp_path, {"pyproject.toml": "", "base.py": BASE, "main.py": main})
    assert ("base.py", 13, "XLA601") in lint_all(tmp_path)

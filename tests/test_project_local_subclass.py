"""The script's own subclass of a framework class (issue 28, session 12: MRO across modules).

``TaggingTrainer(TPUTrainer)`` is defined in the launching script and overrides
``compute_loss``; ``trainer.train()`` runs the framework's ``Trainer.train`` (another module,
no torch_xla) on a ``TaggingTrainer``: its ``self.compute_loss`` is the script's override (the
base's own, with its ``.item()``, never runs), its ``self.optimizer_step()`` the TPU
subclass's ``xm.optimizer_step`` (no XLA201), and its ``if self.is_main(): self.save()`` the
TPU subclass's global-master test around ``xm.save``, which every replica must call (XLA602).
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

TRAINER = '''\
class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.optimizer = opt

    def compute_loss(self, batch):
        loss = self.model(batch).sum()
        print(loss.item())
        return loss

    def optimizer_step(self):
        self.optimizer.step()

    def is_main(self):
        return True

    def save(self):
        pass

    def train(self, loader):
        for batch in loader:
            loss = self.compute_loss(batch)
            loss.backward()
            self.optimizer_step()
        if self.is_main():
            self.save()
'''

TPU = '''\
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from .trainer import Trainer


class TPUTrainer(Trainer):
    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)

    def is_main(self):
        return xr.global_ordinal() == 0

    def save(self):
        xm.save(self.model.state_dict(), "last.pt")
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from kit.tpu import TPUTrainer


class TaggingTrainer(TPUTrainer):
    def compute_loss(self, batch):
        loss = self.model(batch).mean()
        return loss


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    trainer = TaggingTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.train(pl.MpDeviceLoader(loader, device))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_the_scripts_subclass_runs_the_framework_loop(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": TRAINER, "kit/tpu.py": TPU,
                     "run.py": RUN})
    # the TPU subclass's xm.save (every replica must call it) under its global-master test
    assert lint_all(tmp_path) == {("kit/trainer.py", 26, "XLA602")}
    project.clear_cache()
    assert lint(tmp_path, "kit/trainer.py") == {("kit/trainer.py", 26, "XLA602")}


def test_without_the_override_the_base_body_runs(tmp_path):
    run = RUN.replace('''    def compute_loss(self, batch):
        loss = self.model(batch).mean()
        return loss
''', "    pass\n")
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": TRAINER, "kit/tpu.py": TPU,
                     "run.py": run})
    assert ("kit/trainer.py", 8, "XLA501") in lint(tmp_path, "kit/trainer.py")

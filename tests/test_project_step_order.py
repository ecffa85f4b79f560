"""XLA203 across a base class and its override (issue 28, session 12: the order of step calls).

A base trainer's loop clips the gradients and then calls ``self.optimizer_step()``; the TPU
subclass of another module overrides it with ``xm.optimizer_step(self.optimizer)``, which
all-reduces the gradients after the clip: each replica clipped its own unreduced gradients.
One replica (``debug_single_process=True``) is silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

BASE = '''\
import torch


class Trainer:
    def __init__(self, model, opt):
        self.model = model
        self.optimizer = opt

    def optimizer_step(self):
        self.optimizer.step()

    def fit(self, loader):
        for x in loader:
            self.model(x).sum().backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer_step()
'''

TPU = '''\
import torch_xla.core.xla_model as xm

from .base import Trainer


class TpuTrainer(Trainer):
    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from kit.tpu import TpuTrainer


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    TpuTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1)).fit(pl.MpDeviceLoader(loader, device))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def _project(base, tpu=TPU):
    write(base, {"pyproject.toml": "", "kit/__init__.py": "", "kit/base.py": BASE, "kit/tpu.py": tpu, "run.py": RUN})


def test_a_clip_before_the_overrides_xm_optimizer_step(tmp_path):
    _project(tmp_path)
    assert lint_all(tmp_path) == {("kit/base.py", 15, "XLA203")}
    project.clear_cache()
    assert lint(tmp_path, "kit/base.py") == {("kit/base.py", 15, "XLA203")}


def test_one_replica_is_silent(tmp_path):
    # debug_single_process: one replica, nothing to reduce
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/base.py": BASE, "kit/tpu.py": TPU,
                     "run.py": RUN.replace("args=([],))", "args=([],), debug_single_process=True)")})
    assert lint(tmp_path, "kit/base.py") == set()

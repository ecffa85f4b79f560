"""A host read of a value computed on the device from a tensor another module's step hands in
(issue 28, session 12).

``(logits.argmax(dim=1) == labels).sum().item()`` in a metric's ``update`` (a module without
torch_xla), which another module's step loop calls with the model's device outputs: the
comparison, ``argmax`` and ``sum`` stay on the device, so the ``.item()`` syncs every step
(XLA501). Called only after the loop, it stays silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

METRICS = '''\
class Accuracy:
    def __init__(self):
        self.correct = 0

    def update(self, logits, labels):
        self.correct += (logits.argmax(dim=1) == labels).sum().item()
        self.share = float(labels.float().mean() * 2)
'''

ENGINE = '''\
import torch
import torch_xla.core.xla_model as xm


def train_one_epoch(model, opt, loader, metric):
    for x, y in loader:
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        loss.backward()
        xm.optimizer_step(opt)
        metric.update(logits, y)
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from engine import train_one_epoch
from metrics import Accuracy


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train_one_epoch(model, opt, pl.MpDeviceLoader(loader, device), Accuracy())


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_reads_derived_from_the_steps_device_tensors(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "metrics.py": METRICS, "engine.py": ENGINE, "run.py": RUN})
    expected = {("metrics.py", 6, "XLA501"), ("metrics.py", 7, "XLA501")}
    assert lint_all(tmp_path) == expected
    project.clear_cache()
    assert lint(tmp_path, "metrics.py") == expected


def test_the_same_metric_after_the_loop_is_silent(tmp_path):
    engine = ENGINE.replace("        metric.update(logits, y)\n", "    metric.update(logits, y)\n")
    write(tmp_path, {"pyproject.toml": "", "metrics.py": METRICS, "engine.py": engine, "run.py": RUN})
    assert lint(tmp_path, "metrics.py") == set()

"""Host reads of a ``**kwargs`` value (session 13): a DETR/DeiT-style ``MetricLogger.update(**kwargs)``
reading ``v.item()`` for each ``for k, v in kwargs.items()`` is a sync every step when a call
from the step passes a device tensor by keyword (``logger.update(loss=loss, lr=lr)``), in the
module or, in project mode, from another module's step. Keywords that are host values, or a
read guarded by ``isinstance(v, float)``, stay silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

METERS = '''\
import torch


class MetricLogger:
    def __init__(self):
        self.meters = {}

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            self.meters[k] = v
'''

TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from meters import MetricLogger


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    logger = MetricLogger()
    for x in loader:
        loss = model(x.to(device)).sum()
        loss.backward()
        logger.update(loss=loss, lr=opt.param_groups[0]["lr"])
        xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_a_device_tensor_by_keyword_from_another_modules_step(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "meters.py": METERS, "train.py": TRAIN})
    assert lint_all(tmp_path) == {("meters.py", 11, "XLA501")}
    project.clear_cache()
    assert lint(tmp_path, "meters.py") == {("meters.py", 11, "XLA501")}


def test_in_one_module(tmp_path):
    one = METERS + "\n\n" + TRAIN.replace("from meters import MetricLogger\n", "").replace("import torch\n", "", 1)
    write(tmp_path, {"pyproject.toml": "", "train.py": one})
    assert lint_all(tmp_path) == {("train.py", 11, "XLA501")}


@pytest.mark.parametrize("meters, train", [
    (METERS, TRAIN.replace("logger.update(loss=loss, ", "logger.update(loss=loss.item(), ")),  # host values only
    (METERS.replace("isinstance(v, torch.Tensor)", "isinstance(v, float)"), TRAIN),  # a float guard
])
def test_host_keywords_or_a_float_guard_are_silent(tmp_path, meters, train):
    write(tmp_path, {"pyproject.toml": "", "meters.py": meters, "train.py": train})
    assert ("meters.py", 11, "XLA501") not in lint_all(tmp_path)

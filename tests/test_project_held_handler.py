"""Plugins fired through a handler object the trainer was handed (issue 28, session 12).

The script builds ``PluginManager([ConsoleLogger(), History()])`` and hands it to
``StepTrainer(model, opt, plugins)``, which keeps it as ``self.plugins`` and calls
``self.plugins.step_end(self, step, loss)`` in its step loop; the manager's ``step_end``
calls each plugin's ``on_step_end``. The plugins' hooks are step code: a host read of the
loss there is XLA501/XLA507. The same hooks fired only after the loop stay silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

MANAGER = '''\
class PluginManager:
    def __init__(self, plugins=()):
        self.plugins = list(plugins)

    def step_end(self, trainer, step, loss):
        for p in self.plugins:
            p.on_step_end(trainer, step, loss)

    def epoch_end(self, trainer, loss):
        for p in self.plugins:
            p.on_epoch_end(trainer, loss)
'''

PLUGINS = '''\
import torch_xla.core.xla_model as xm


class ConsoleLogger:
    def on_step_end(self, trainer, step, loss):
        if step % 20 == 0:
            xm.master_print(f"loss {loss:.4f}")

    def on_epoch_end(self, trainer, loss):
        xm.master_print(f"epoch loss {loss:.4f}")


class History:
    def __init__(self):
        self.values = []

    def on_step_end(self, trainer, step, loss):
        self.values.append(float(loss))

    def on_epoch_end(self, trainer, loss):
        self.values.append(loss.item())
'''

TRAINER = '''\
import torch_xla.core.xla_model as xm


class StepTrainer:
    def __init__(self, model, optimizer, plugins):
        self.model = model
        self.optimizer = optimizer
        self.plugins = plugins

    def fit(self, loader):
        for step, x in enumerate(loader):
            loss = self.model(x).sum()
            loss.backward()
            xm.optimizer_step(self.optimizer)
            self.plugins.step_end(self, step, loss)
        self.plugins.epoch_end(self, loss)
'''

RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from manager import PluginManager
from plugins import ConsoleLogger, History
from trainer import StepTrainer


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    StepTrainer(model, opt, PluginManager([ConsoleLogger(), History()])).fit(pl.MpDeviceLoader(loader, device))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_hooks_fired_through_a_handed_handler_are_step_code(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "manager.py": MANAGER, "plugins.py": PLUGINS, "trainer.py": TRAINER,
                     "run.py": RUN})
    expected = {("plugins.py", 7, "XLA507"), ("plugins.py", 18, "XLA501")}
    assert lint_all(tmp_path) == expected
    project.clear_cache()
    assert lint(tmp_path, "plugins.py") == expected


def test_a_handler_called_after_the_loop_only_is_silent(tmp_path):
    trainer = TRAINER.replace("            self.plugins.step_end(self, step, loss)\n", "")
    write(tmp_path, {"pyproject.toml": "", "manager.py": MANAGER, "plugins.py": PLUGINS, "trainer.py": trainer,
                     "run.py": RUN})
    assert lint(tmp_path, "plugins.py") == set()

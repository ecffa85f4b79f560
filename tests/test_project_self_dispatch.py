"""Project mode: a base class's loop calls ``self.m(...)`` and the object is a subclass of
another module whose override runs (class-hierarchy dispatch, narrowed to the classes the
launched code builds). Whether that loop is the training step is settled with the class: the
override may be what runs the backward and the update (``loss = self.training_step(batch)``).
The overrides the step loop calls each step are step code there (XLA501, XLA507 under the
loop's step gate); those an epoch loop or an evaluation loop calls are not, and an override
of a class the launched code never builds is not reached
(:func:`flake8_xla.project._self_site_calls`)."""

from __future__ import annotations

import pytest

from flake8_runner import flake8
from test_project_mode import lint, lint_all, write

#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")

BASE = 'import torch\n\n\nclass BaseTrainer:\n    def __init__(self, model, loader, optimizer):\n        self.model = model\n        self.loader = loader\n        self.optimizer = optimizer\n\n    def training_step(self, batch):\n        raise NotImplementedError\n\n    def fit(self, epochs):\n        for epoch in range(epochs):\n            metrics = self.train_epoch()\n            self.on_epoch_end(epoch, metrics)\n        self.evaluate()\n\n    def train_epoch(self):\n        total = 0.0\n        for step, batch in enumerate(self.loader):\n            loss = self.training_step(batch)\n            if step % 100 == 0:\n                self.log_every(step)\n            self.after_step(step)\n        return total\n\n    def evaluate(self):\n        for batch in self.loader:\n            self.eval_step(batch)\n\n    def on_epoch_end(self, epoch, metrics):\n        pass\n\n    def log_every(self, step):\n        pass\n\n    def after_step(self, step):\n        pass\n\n    def eval_step(self, batch):\n        pass\n'

TPU = 'import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n\nfrom .base import BaseTrainer\n\n\nclass TPUTrainer(BaseTrainer):\n    def training_step(self, batch):\n        x, y = batch\n        loss = torch.nn.functional.mse_loss(self.model(x), y)\n        loss.backward()\n        xm.optimizer_step(self.optimizer)\n        self.last = loss.detach()\n        return loss\n\n    def log_every(self, step):\n        print(step, self.last.item())\n\n    def after_step(self, step):\n        print(self.last.item())\n\n    def on_epoch_end(self, epoch, metrics):\n        print(self.last.item())\n\n    def eval_step(self, batch):\n        x, y = batch\n        print(self.last.item())\n\n\nclass CPUOnlyTrainer(BaseTrainer):\n    def training_step(self, batch):\n        x, y = batch\n        loss = torch.nn.functional.mse_loss(self.model(x), y)\n        loss.backward()\n        self.optimizer.step()\n        return loss\n\n    def after_step(self, step):\n        print(self.last.item())\n'

TRAIN = 'import torch\nimport torch_xla\nfrom pkg.tpu import TPUTrainer\n\n\ndef _mp_fn(index):\n    model = torch.nn.Linear(4, 4).to(torch_xla.device())\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    TPUTrainer(model, None, opt).fit(3)\n\n\nif __name__ == "__main__":\n    torch_xla.launch(_mp_fn)\n'

FILES = {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/tpu.py": TPU, "train.py": TRAIN}

#: log_every under the base loop's `if step % 100 == 0:` (XLA507), after_step every step
#: (XLA501); on_epoch_end (once per epoch), eval_step (the evaluation loop steps nothing) and
#: CPUOnlyTrainer.after_step (no launched code builds that class) stay silent
EXPECTED = {("pkg/tpu.py", 18, "XLA507"), ("pkg/tpu.py", 21, "XLA501")}


def test_overrides_the_base_step_loop_calls_are_step_code(tmp_path):
    write(tmp_path, FILES)
    assert lint_all(tmp_path) == EXPECTED
    assert lint(tmp_path, "pkg/tpu.py") == EXPECTED  # alone, by its path
    assert lint(tmp_path, "pkg/base.py") == set()


def test_through_real_flake8_all_files_and_alone(tmp_path):
    write(tmp_path, FILES)
    paths = ["pkg/__init__.py", "pkg/base.py", "pkg/tpu.py", "train.py"]
    found = flake8(paths, cwd=tmp_path)
    assert found[(tmp_path / "pkg/tpu.py").resolve()] == {(18, 21, "XLA507"), (21, 15, "XLA501")}
    assert not any(v for k, v in found.items() if k.name != "tpu.py")
    alone = flake8(["pkg/tpu.py"], cwd=tmp_path)
    assert alone[(tmp_path / "pkg/tpu.py").resolve()] == {(18, 21, "XLA507"), (21, 15, "XLA501")}


def test_no_step_in_the_override_no_step_loop(tmp_path):
    # the override only computes the loss and the base steps nothing: the loop is no step loop
    tpu = TPU.replace("        loss.backward()\n        xm.optimizer_step(self.optimizer)\n", "")
    write(tmp_path, {**FILES, "pkg/tpu.py": tpu})
    assert lint_all(tmp_path) == set()


def test_the_step_in_the_base_loop_itself(tmp_path):
    # the override runs the backward, the base's loop the update (a local step loop): the same
    # overrides are step code, and the base's plain optimizer.step() is XLA201 there
    base = BASE.replace("            loss = self.training_step(batch)\n",
                        "            loss = self.training_step(batch)\n            self.optimizer.step()\n")
    tpu = TPU.replace("        xm.optimizer_step(self.optimizer)\n", "")
    write(tmp_path, {**FILES, "pkg/base.py": base, "pkg/tpu.py": tpu})
    assert lint_all(tmp_path) == {("pkg/base.py", 23, "XLA201"), ("pkg/tpu.py", 17, "XLA507"),
                                  ("pkg/tpu.py", 20, "XLA501")}


def test_a_class_only_a_cpu_script_builds_is_not_reached(tmp_path):
    train = TRAIN.replace("TPUTrainer(model, None, opt).fit(3)", "model(torch.zeros(4))")
    cpu = "import torch\nfrom pkg.tpu import TPUTrainer\n\nTPUTrainer(torch.nn.Linear(4, 4), [], None).fit(1)\n"
    write(tmp_path, {**FILES, "train.py": train, "cpu_run.py": cpu})
    assert {f for f in lint_all(tmp_path) if f[0] == "pkg/tpu.py"} == set()


def test_self_sites_in_the_summary(tmp_path):
    from flake8_xla.project import _project, summary_of
    from flake8_xla.project.callers import SelfSite
    from flake8_xla.settings import Settings

    write(tmp_path, FILES)
    files = _project(tmp_path.resolve())
    s = summary_of((tmp_path / "pkg/base.py").resolve(), files, Settings())
    sites = s.function("BaseTrainer.train_epoch").self_sites
    own = ("training_step", "log_every", "after_step")
    assert [(x.method, x.line, x.loops) for x in sites] == [
        ("training_step", 22, ((False, own, False),)),
        ("log_every", 24, ((False, own, True),)),
        ("after_step", 25, ((False, own, False),)),
    ]
    assert all(type(x) is SelfSite for x in sites)
    assert s.function("BaseTrainer.fit").self_sites[0].loops == ((False, ("train_epoch", "on_epoch_end"), False),)

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
        ("training_step", 22, ((False, own, False, False),)),
        ("log_every", 24, ((False, own, True, False),)),
        ("after_step", 25, ((False, own, False, False),)),
    ]
    assert all(type(x) is SelfSite for x in sites)
    assert s.function("BaseTrainer.fit").self_sites[0].loops == (
        (False, ("train_epoch", "on_epoch_end"), False, False),)


# --- a one-shot loader another module iterates once per epoch (XLA306 across modules) ------

HOOKED_BASE = '''\
class Base:
    def wrap_loader(self, loader):
        return loader

    def step(self, batch):
        pass

    def fit(self, loader, epochs):
        batches = self.wrap_loader(loader)
        for epoch in range(epochs):
            for i, batch in enumerate(batches):
                self.step(batch)
'''

HOOKED_TPU = '''\
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from base import Base


class TPU(Base):
    def wrap_loader(self, loader):
        device = torch_xla.device()
        return pl.ParallelLoader(loader, [device]).per_device_loader(device)
'''

HOOKED_TRAIN = '''\
import torch_xla
from tpu import TPU


def _mp_fn(index, loader):
    TPU().fit(loader, 3)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


def _hooked(tmp_path, base=HOOKED_BASE, tpu=HOOKED_TPU, train=HOOKED_TRAIN, extra=None):
    write(tmp_path, {"pyproject.toml": "", "base.py": base, "tpu.py": tpu, "train.py": train, **(extra or {})})
    return lint_all(tmp_path)


def test_a_one_shot_loader_an_override_returns_is_spent_after_the_first_epoch(tmp_path):
    assert _hooked(tmp_path) == {("tpu.py", 10, "XLA306")}
    assert lint(tmp_path, "tpu.py") == {("tpu.py", 10, "XLA306")}


def test_a_plain_function_of_another_module_returning_one(tmp_path):
    helpers = HOOKED_TPU.replace("from base import Base\n\n\nclass TPU(Base):\n    def wrap_loader(self, loader):\n",
                                 "\ndef wrap_loader(loader):\n").replace("        ", "    ")
    train = ("import torch_xla\nfrom helpers import wrap_loader\n\n\ndef _mp_fn(index, loader, model):\n"
             "    batches = wrap_loader(loader)\n    for epoch in range(3):\n        for batch in batches:\n"
             "            model(batch)\n\n\nif __name__ == '__main__':\n    torch_xla.launch(_mp_fn, args=(None, None))\n")
    write(tmp_path, {"pyproject.toml": "", "helpers.py": helpers, "train.py": train})
    assert lint_all(tmp_path) == {("helpers.py", 7, "XLA306")}


@pytest.mark.parametrize("change", [
    # rebuilt in each epoch: a fresh loader per pass
    ("        batches = self.wrap_loader(loader)\n        for epoch in range(epochs):\n",
     "        for epoch in range(epochs):\n            batches = self.wrap_loader(loader)\n"),
    # iterated once: no epoch loop around it
    ("        for epoch in range(epochs):\n            for i, batch in enumerate(batches):\n                self.step(batch)\n",
     "        for i, batch in enumerate(batches):\n            self.step(batch)\n"),
    # the epoch loop visibly runs once
    ("                self.step(batch)\n", "                self.step(batch)\n            break\n"),
    # bound twice: what the name holds in a pass is not seen
    ("        batches = self.wrap_loader(loader)\n", "        batches = self.wrap_loader(loader)\n"
                                                    "        if epochs > 1:\n            batches = list(loader)\n"),
], ids=["rebuilt-per-epoch", "one-pass", "epoch-loop-breaks", "rebound"])
def test_one_shot_loader_traps(tmp_path, change):
    old, new = change
    assert old in HOOKED_BASE
    assert _hooked(tmp_path, base=HOOKED_BASE.replace(old, new)) == set()


def test_the_override_of_a_class_no_launch_builds(tmp_path):
    train = HOOKED_TRAIN.replace("TPU().fit(loader, 3)", "Base().fit(loader, 3)").replace(
        "from tpu import TPU", "from base import Base")
    assert _hooked(tmp_path, train=train) == set()


def test_a_mpdeviceloader_is_fine(tmp_path):
    tpu = HOOKED_TPU.replace("pl.ParallelLoader(loader, [device]).per_device_loader(device)",
                             "pl.MpDeviceLoader(loader, device)")
    assert _hooked(tmp_path, tpu=tpu) == set()


def test_a_class_level_lambda_calling_a_project_function_is_summarised(tmp_path):
    # a lambda's parameter read at class level (torch/_numpy/_ndarray.py's shape) made the
    # summary raise, so the module was unknown to the project
    from flake8_xla.project import _project
    from flake8_xla.project import summary as S
    from flake8_xla.settings import Settings

    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/ops.py": "def divmod(a, b):\n    return a, b\n",
                     "pkg/arr.py": "import torch\n\nfrom . import ops\n\n\nclass A:\n"
                                   "    rdivmod = staticmethod(lambda self, other: ops.divmod(other, self))\n"})
    files = _project(tmp_path.resolve())
    s = S.summarise((tmp_path / "pkg/arr.py").resolve(), files, Settings())
    assert s is not None and [c.target[1] for c in s.calls_into] == ["divmod"]



# --- a framework module without torch_xla: its loop runs as XLA code where a launch hands
# --- it the callbacks (the launching module decides, not the trainer's own imports)

FRAMEWORK = 'import torch\n\n\nclass Trainer:\n    def __init__(self, model, loader, optimizer, callbacks=()):\n        self.model = model\n        self.loader = loader\n        self.optimizer = optimizer\n        self.callbacks = list(callbacks)\n\n    def train(self):\n        for step, (x, y) in enumerate(self.loader):\n            loss = torch.nn.functional.mse_loss(self.model(x), y)\n            loss.backward()\n            self.optimizer.step()\n            for cb in self.callbacks:\n                cb.on_step_end(self, step, loss)\n'

FRAMEWORK_CALLBACKS = 'class Printer:\n    def on_step_end(self, trainer, step, loss):\n        print(loss.item())\n\n\nclass Guard:\n    def on_step_end(self, trainer, step, loss):\n        if loss > 10:\n            raise RuntimeError("diverged")\n'

FRAMEWORK_TRAIN = 'import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.parallel_loader as pl\nfrom callbacks import Guard, Printer\nfrom engine import Trainer\n\n\ndef _mp_fn(index, loader):\n    device = torch_xla.device()\n    model = torch.nn.Linear(4, 4).to(device)\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    Trainer(model, pl.MpDeviceLoader(loader, device), opt, callbacks=[Printer(), Guard()]).train()\n\n\nif __name__ == "__main__":\n    torch_xla.launch(_mp_fn, args=(None,))\n'


def test_callbacks_of_a_trainer_module_without_torch_xla_run_in_the_step(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "engine.py": FRAMEWORK, "callbacks.py": FRAMEWORK_CALLBACKS,
                     "train.py": FRAMEWORK_TRAIN})
    # engine.py:15 the plain optimizer.step() of multi-process launched code (XLA201);
    # callbacks.py:8 Guard's `if loss > 10:` tests the step's device loss (XLA502)
    assert lint_all(tmp_path) == {("callbacks.py", 3, "XLA501"), ("callbacks.py", 8, "XLA502"),
                                  ("engine.py", 15, "XLA201")}
    assert lint(tmp_path, "callbacks.py") == {("callbacks.py", 3, "XLA501"), ("callbacks.py", 8, "XLA502")}


def test_callbacks_only_a_cpu_script_hands_to_that_trainer(tmp_path):
    cpu = FRAMEWORK_TRAIN.replace("import torch_xla\nimport torch_xla.core.xla_model as xm\n"
                                  "import torch_xla.distributed.parallel_loader as pl\n", "").replace(
        "    device = torch_xla.device()\n", "    device = 'cpu'\n").replace(
        "pl.MpDeviceLoader(loader, device)", "loader").replace(
        "    torch_xla.launch(_mp_fn, args=(None,))\n", "    _mp_fn(0, None)\n")
    assert "torch_xla" not in cpu
    write(tmp_path, {"pyproject.toml": "", "engine.py": FRAMEWORK, "callbacks.py": FRAMEWORK_CALLBACKS,
                     "train.py": cpu})
    assert lint_all(tmp_path) == set()



# --- the adversarial round on these (helper probes d10, d11, e15, d01n, f12, e07) ----------

@pytest.mark.parametrize("old, new", [
    # the hook runs on the first step only: not every step's code
    ("            self.after_step(step)\n", "            if step == 0:\n                self.after_step(step)\n"),
    # after the pass's sync: it reads a finished graph
    ("            self.after_step(step)\n", "            torch_xla.sync()\n            self.after_step(step)\n"),
], ids=["first-step-only", "after-the-sync"])
def test_an_override_called_once_or_after_the_sync_is_no_step_read(tmp_path, old, new):
    base = BASE.replace("import torch\n", "import torch\nimport torch_xla\n", 1).replace(old, new)
    assert new in base
    write(tmp_path, {**FILES, "pkg/base.py": base})
    assert lint_all(tmp_path) == {("pkg/tpu.py", 18, "XLA507")}


def test_a_base_module_that_never_names_torch(tmp_path):
    # plain Python (the base's `import torch` was unused): the overrides are step code all the same
    write(tmp_path, {**FILES, "pkg/base.py": BASE.replace("import torch\n\n\n", "", 1)})
    assert lint_all(tmp_path) == EXPECTED


def test_an_epoch_loop_that_runs_once_spends_nothing(tmp_path):
    base = HOOKED_BASE.replace("for epoch in range(epochs):", "for epoch in range(1):")
    assert _hooked(tmp_path, base=base) == set()


def test_a_helper_imported_under_another_name(tmp_path):
    helpers = HOOKED_TPU.replace("from base import Base\n\n\nclass TPU(Base):\n    def wrap_loader(self, loader):\n",
                                 "\ndef wrap_loader(loader):\n").replace("        ", "    ")
    train = ("import torch_xla\nfrom helpers import wrap_loader as make_batches\n\n\ndef _mp_fn(index, loader, model):\n"
             "    batches = make_batches(loader)\n    for epoch in range(3):\n        for batch in batches:\n"
             "            model(batch)\n\n\nif __name__ == '__main__':\n    torch_xla.launch(_mp_fn, args=(None, None))\n")
    write(tmp_path, {"pyproject.toml": "", "helpers.py": helpers, "train.py": train})
    assert lint_all(tmp_path) == {("helpers.py", 7, "XLA306")}


def test_a_framework_trainer_that_never_names_torch(tmp_path):
    engine = FRAMEWORK.replace("import torch\n\n\n", "").replace(
        "torch.nn.functional.mse_loss(self.model(x), y)", "self.loss_fn(self.model(x), y)").replace(
        "        self.callbacks = list(callbacks)\n", "        self.callbacks = list(callbacks)\n        self.loss_fn = None\n")
    assert "torch" not in engine
    write(tmp_path, {"pyproject.toml": "", "engine.py": engine, "callbacks.py": FRAMEWORK_CALLBACKS,
                     "train.py": FRAMEWORK_TRAIN})
    assert {f for f in lint_all(tmp_path) if f[0] == "callbacks.py"} == {("callbacks.py", 3, "XLA501"),
                                                                           ("callbacks.py", 8, "XLA502")}

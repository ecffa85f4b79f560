"""Objects across a launch a framework's own method makes (issue 28, session 13).

A script that never imports torch_xla builds ``XLATrainer(...)`` and the user's module and
calls ``trainer.fit(model, dm)``; the framework's base ``fit`` calls ``self.launch(...)``,
and ``XLATrainer.launch`` runs ``torch_xla.launch(_run_fit, args=(self, module, dm))``. The
reach follows the script's host code into that launch with the objects it built (object
values: the class, and what its constructor call passed), so in each replica
``trainer._run(...)`` runs the base loop on the ``XLATrainer``: its ``self.optimizer_step``
is ``xm.optimizer_step`` (a clip before it is XLA203) and the base ``optimizer_step`` /
``save_checkpoint`` / ``root_device`` that the subclass overrides never run there. The GPU
script's base ``Trainer`` reaches no launch.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

TRAINER = '''\
import torch


def _run_fit(index, trainer, module, dm):
    trainer._run(module, dm)


class Trainer:
    def __init__(self, clip=None):
        self.clip = clip

    def root_device(self):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def launch(self, module, dm):
        _run_fit(0, self, module, dm)

    def setup_module(self, module):
        return module.to(self.root_device())

    def optimizer_step(self, optimizer):
        optimizer.step()

    def save_checkpoint(self, module, path):
        torch.save(module.state_dict(), path)

    def fit(self, module, dm):
        self.launch(module, dm)

    def _run(self, module, dm):
        module = self.setup_module(module)
        optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        for batch in dm.loader():
            optimizer.zero_grad()
            loss = module(batch).sum()
            loss.backward()
            if self.clip:
                torch.nn.utils.clip_grad_norm_(module.parameters(), self.clip)
            self.optimizer_step(optimizer)
        self.save_checkpoint(module, "last.pt")
'''

XLA = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from .trainer import Trainer, _run_fit


class XLATrainer(Trainer):
    def root_device(self):
        return torch_xla.device()

    def launch(self, module, dm):
        torch_xla.launch(_run_fit, args=(self, module, dm))

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)

    def save_checkpoint(self, module, path):
        xm.save(module.state_dict(), path)
'''

USER = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Data:
    def loader(self):
        return [torch.zeros(2, 4)]
'''

TPU = '''\
from kit.xla import XLATrainer
from user import Data, Net


def main():
    trainer = XLATrainer(clip=1.0)
    trainer.fit(Net(), Data())


if __name__ == "__main__":
    main()
'''

GPU = '''\
from kit.trainer import Trainer
from user import Data, Net

if __name__ == "__main__":
    Trainer(clip=1.0).fit(Net(), Data())
'''


def _project(tmp_path, tpu=TPU):
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": TRAINER, "kit/xla.py": XLA,
                     "user.py": USER, "train_tpu.py": tpu, "train_gpu.py": GPU})


def test_the_launch_in_a_framework_method_runs_the_base_loop_on_the_subclass(tmp_path):
    _project(tmp_path)
    # the clip before XLATrainer.optimizer_step (xm.optimizer_step) in the base loop; the base's
    # optimizer.step(), torch.save and torch.device("cuda") are the overridden ones: silent
    assert lint_all(tmp_path) == {("kit/trainer.py", 38, "XLA203")}
    project.clear_cache()
    assert lint(tmp_path, "kit/trainer.py") == {("kit/trainer.py", 38, "XLA203")}


def test_the_reach_carries_the_objects_the_script_built(tmp_path):
    _project(tmp_path)
    from pathlib import Path

    from flake8_xla.settings import Settings

    files = project._project(Path(tmp_path).resolve())
    index = project._reach_index(files, Settings())
    trainer = index[str((tmp_path / "kit/trainer.py").resolve())]
    assert {"_run_fit", "Trainer._run", "Trainer.setup_module"} <= set(trainer)
    assert "Trainer.optimizer_step" not in trainer and "Trainer.save_checkpoint" not in trainer
    assert trainer["Trainer._run"] == (True, "train_tpu.py")  # a multi-process launch, from the script
    user = index[str((tmp_path / "user.py").resolve())]
    assert {"Net.forward", "Data.loader"} <= set(user)  # the objects handed into the launch


def test_a_script_with_only_the_base_trainer_reaches_no_launch(tmp_path):
    _project(tmp_path, tpu=GPU)
    assert lint_all(tmp_path) == set()



# --- a launch through a strategy the trainer was handed (Lightning's shape) ----------------------

LOOP = '''\
import torch

from .strategies import CPUStrategy


def _fit_worker(index, trainer, module):
    trainer._run(module)


class Trainer:
    def __init__(self, strategy=None, clip=None):
        self.strategy = strategy or CPUStrategy()
        self.clip = clip

    def fit(self, module):
        self.strategy.launch(_fit_worker, self, module)

    def _run(self, module):
        module = self.strategy.setup_module(module)
        optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        for batch in module.batches():
            optimizer.zero_grad()
            loss = module(batch).sum()
            loss.backward()
            if self.clip:
                torch.nn.utils.clip_grad_norm_(module.parameters(), self.clip)
            self.strategy.optimizer_step(optimizer)
'''

STRATEGIES = '''\
import torch


class CPUStrategy:
    def launch(self, fn, *args):
        fn(0, *args)

    def setup_module(self, module):
        return module

    def optimizer_step(self, optimizer):
        optimizer.step()

    def save(self, state, path):
        torch.save(state, path)
'''

XLA_STRATEGY = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from .strategies import CPUStrategy


class XLAStrategy(CPUStrategy):
    def launch(self, fn, *args):
        torch_xla.launch(fn, args=args)

    def setup_module(self, module):
        return module.to(torch_xla.device())

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)
'''

NET = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)

    def batches(self):
        return [torch.zeros(2, 4)]
'''

SCRIPT = '''\
from kit.loop import Trainer
from kit.xla import XLAStrategy
from net import Net

if __name__ == "__main__":
    trainer = Trainer(strategy=XLAStrategy(), clip=1.0)
    trainer.fit(Net())
'''


def _strategy_project(tmp_path, script=SCRIPT):
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/loop.py": LOOP, "kit/strategies.py": STRATEGIES,
                     "kit/xla.py": XLA_STRATEGY, "net.py": NET, "train.py": script})


def test_the_launch_of_a_handed_strategy_starts_the_function_with_the_handed_objects(tmp_path):
    _strategy_project(tmp_path)
    from pathlib import Path

    from flake8_xla.settings import Settings

    files = project._project(Path(tmp_path).resolve())
    index = project._reach_index(files, Settings())
    loop = index[str((tmp_path / "kit/loop.py").resolve())]
    assert {"_fit_worker", "Trainer._run"} <= set(loop)
    assert "Trainer.fit" not in loop  # (it runs on the host, before the launch)
    # the CPU strategy the `or` default would build is not: the script handed an XLAStrategy
    assert str((tmp_path / "kit/strategies.py").resolve()) not in index
    assert set(index[str((tmp_path / "kit/xla.py").resolve())]) >= {"XLAStrategy.optimizer_step",
                                                                     "XLAStrategy.setup_module"}
    assert {"Net.forward", "Net.batches"} <= set(index[str((tmp_path / "net.py").resolve())])


def test_the_cpu_strategy_script_launches_nothing(tmp_path):
    _strategy_project(tmp_path, script=SCRIPT.replace("strategy=XLAStrategy(), ", ""))
    assert lint_all(tmp_path) == set()


# --- callbacks the script built, fired in the launched loop ----------------------------------------

CB_TRAINER = TRAINER.replace('''    def __init__(self, clip=None):
        self.clip = clip
''', '''    def __init__(self, clip=None, callbacks=None):
        self.clip = clip
        self.callbacks = list(callbacks or [])
''').replace('''            self.optimizer_step(optimizer)
''', '''            self.optimizer_step(optimizer)
            for cb in self.callbacks:
                cb.on_step_end(self, loss)
''')

CALLBACKS = '''\
class Printer:
    def on_step_end(self, trainer, loss):
        print(loss.item())


class Quiet:
    def on_step_end(self, trainer, loss):
        pass
'''

CB_TPU = '''\
from cbs import Printer, Quiet
from kit.xla import XLATrainer
from user import Data, Net

if __name__ == "__main__":
    XLATrainer(callbacks=[Printer(), Quiet()]).fit(Net(), Data())
'''


def test_a_callback_the_script_built_runs_in_the_launched_step(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": CB_TRAINER, "kit/xla.py": XLA,
                     "user.py": USER, "cbs.py": CALLBACKS, "train_tpu.py": CB_TPU})
    # the objects reached the loop through the framework's launch: the reach resolved the
    # dispatch, and its callers question reads that (the host script names no torch_xla)
    # (the base loop's clip is under `if self.clip:`: a constant kept on self is not followed,
    # so the clip may run, before XLATrainer's xm.optimizer_step: XLA203 there too)
    assert lint_all(tmp_path) == {("cbs.py", 3, "XLA501"), ("kit/trainer.py", 39, "XLA203")}
    project.clear_cache()
    assert lint(tmp_path, "cbs.py") == {("cbs.py", 3, "XLA501")}


def test_a_callback_of_the_gpu_script_stays_silent(tmp_path):
    gpu = CB_TPU.replace("from kit.xla import XLATrainer", "from kit.trainer import Trainer as XLATrainer")
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": CB_TRAINER, "kit/xla.py": XLA,
                     "user.py": USER, "cbs.py": CALLBACKS, "train_gpu.py": gpu})
    assert lint_all(tmp_path) == set()


# --- precision (session 13's attack) ---------------------------------------------------------------

def test_a_reduction_the_subclass_override_does_counts(tmp_path):
    trainer = TRAINER.replace('''            if self.clip:
                torch.nn.utils.clip_grad_norm_(module.parameters(), self.clip)
            self.optimizer_step(optimizer)
''', '''            self.reduce_gradients(optimizer)
            optimizer.step()
''').replace('''    def optimizer_step(self, optimizer):''', '''    def reduce_gradients(self, optimizer):
        pass

    def optimizer_step(self, optimizer):''')
    xla = XLA + '''
    def reduce_gradients(self, optimizer):
        xm.reduce_gradients(optimizer)
'''
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": trainer, "kit/xla.py": xla,
                     "user.py": USER, "train_tpu.py": TPU})
    assert lint_all(tmp_path) == set()  # (not XLA201: the launched XLATrainer reduces first)
    # without the override's reduction the plain step is XLA201
    write(tmp_path, {"kit/xla.py": XLA})
    project.clear_cache()
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA201"} == {("kit/trainer.py", 41, "XLA201")}


def test_methods_the_script_never_calls_do_not_run(tmp_path):
    # an evaluation script calls only evaluate(): fit's launch, the loop and its clip never run
    trainer = TRAINER + '''
    def evaluate(self, module, dm):
        for batch in dm.loader():
            module(batch)

    def cuda_benchmark(self):
        torch.cuda.synchronize()
'''
    evaluate = TPU.replace("trainer.fit(Net(), Data())", "trainer.evaluate(Net(), Data())")
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": trainer, "kit/xla.py": XLA,
                     "user.py": USER, "evaluate.py": evaluate})
    assert lint_all(tmp_path) == set()
    # and building an XLA trainer that is never used launches nothing either
    gpu = GPU.replace("Trainer(clip=1.0).fit(Net(), Data())",
                      "spare = XLATrainer(clip=1.0)\n    Trainer(clip=1.0).fit(Net(), Data())").replace(
        "from kit.trainer import Trainer", "from kit.trainer import Trainer\nfrom kit.xla import XLATrainer")
    write(tmp_path, {"evaluate.py": "", "train_gpu.py": gpu})
    project.clear_cache()
    assert lint_all(tmp_path) == set()

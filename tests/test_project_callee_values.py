"""Project mode: what a method of an object of another module gives back (issue 28, values
through dispatch). A backend object whose class the project knows (a launch wrapper hands its
own ``self`` to the launched function of *another* module) answers ``backend.make_loader``
(a plain ``DataLoader``), ``backend.device()`` (the XLA device) and ``backend.step(opt)``
(``xm.optimizer_step``) for the loop that calls them, as an imported helper would."""

from __future__ import annotations

import pytest

from test_project_mode import lint, lint_all, write

#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")

BACKENDS = '''\
def get_backend(name):
    if name == "tpu":
        from .tpu import TPUBackend

        return TPUBackend()
    from .base import Backend

    return Backend()
'''

BASE = '''\
import torch
from torch.utils.data import DataLoader


class Backend:
    def launch(self, fn, args=()):
        fn(0, self, *args)

    def device(self):
        return torch.device("cpu")

    def make_loader(self, dataset, batch_size):
        return DataLoader(dataset, batch_size=batch_size, drop_last=True)

    def step(self, optimizer):
        optimizer.step()

    def log(self, msg):
        print(msg)
'''

TPU = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from .base import Backend


class TPUBackend(Backend):
    def launch(self, fn, args=()):
        torch_xla.launch(fn, args=(self,) + tuple(args))

    def setup(self, index):
        self._device = torch_xla.device()

    def device(self):
        return self._device

    def make_loader(self, dataset, batch_size):
        sampler = DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())
        return LOADER

    def step(self, optimizer):
        xm.optimizer_step(optimizer)

    def log(self, msg):
        xm.master_print(msg)
'''

ENGINE = '''\
import torch
import torch.nn.functional as F


def worker(index, backend, cfg):
    backend.setup(index)
    device = backend.device()
    model = torch.nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = backend.make_loader(cfg.dataset, 32)
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        backend.step(optimizer)
        if step % 10 == 0:
            backend.log(f"step {step} loss {loss:.4f}")
'''

TRAIN = '''\
from accel import get_backend
from engine import worker


def main(cfg):
    backend = get_backend(cfg.backend)
    backend.launch(worker, args=(cfg,))
'''

PLAIN = "DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=True)"
DEVICE = "pl.MpDeviceLoader(DataLoader(dataset, batch_size=batch_size, sampler=sampler, drop_last=True), self._device)"


def project(base, loader: str, tpu_extra: str = "") -> None:
    tpu = TPU.replace("LOADER", loader)
    if "pl." in loader:
        tpu = "import torch_xla.distributed.parallel_loader as pl\n" + tpu
    write(base, {"pyproject.toml": "", "accel/__init__.py": BACKENDS, "accel/base.py": BASE,
                 "accel/tpu.py": tpu + tpu_extra, "engine.py": ENGINE, "train.py": TRAIN})


def test_a_backend_method_s_plain_loader_device_and_step_reach_the_loop(tmp_path):
    project(tmp_path, PLAIN)
    # the loop draws from TPUBackend.make_loader's plain DataLoader and never syncs
    # (xm.optimizer_step without barrier): XLA301; its loss is on TPUBackend.device(): the
    # gated f-string reads the device (XLA507)
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == {("engine.py", 11, "XLA301"),
                                                                       ("engine.py", 18, "XLA507")}
    assert lint(tmp_path, "engine.py") == {("engine.py", 11, "XLA301"), ("engine.py", 18, "XLA507")}


def test_a_backend_method_s_device_loader_syncs_the_loop(tmp_path):
    project(tmp_path, DEVICE)
    # MpDeviceLoader syncs per batch: no XLA301; the gated read is still XLA507
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == {("engine.py", 18, "XLA507")}


def test_a_wrapper_that_hands_on_no_self_leaves_the_backend_unknown(tmp_path):
    project(tmp_path, PLAIN)
    tpu = (tmp_path / "accel/tpu.py").read_text()
    (tmp_path / "accel/tpu.py").write_text(tpu.replace("args=(self,) + tuple(args)", "args=tuple(args)"))
    # what `backend` is in worker is no longer known: nothing of its methods is assumed
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == set()


def test_a_second_xla_caller_passing_another_backend_leaves_it_unknown(tmp_path):
    project(tmp_path, PLAIN)
    write(tmp_path, {"other.py": "import torch_xla\nfrom engine import worker\n\n\n"
                                 "def _mp_fn(index, cfg, backend):\n    worker(index, backend, cfg)\n\n\n"
                                 "def main(cfg, backend):\n    torch_xla.launch(_mp_fn, args=(cfg, backend))\n"})
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == set()


def test_a_cpu_script_calling_the_worker_does_not_change_the_xla_run(tmp_path):
    project(tmp_path, PLAIN)
    # a smoke script that never names torch_xla runs the worker on the CPU; in the XLA
    # processes the backend is still the launch wrapper's TPUBackend
    write(tmp_path, {"smoke.py": "from accel.base import Backend\nfrom engine import worker\n\n\n"
                                 "def smoke(cfg):\n    worker(0, Backend(), cfg)\n"})
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == {("engine.py", 11, "XLA301"),
                                                                       ("engine.py", 18, "XLA507")}


def test_a_cpu_script_s_unlaunched_call_does_not_change_the_xla_run(tmp_path):
    project(tmp_path, PLAIN)
    # it names torch_xla, but the function that calls the worker is neither launched nor
    # reached by launched code: what it passes is not what the XLA processes run with
    write(tmp_path, {"smoke.py": "import torch_xla  # noqa: F401 (checks the install)\n"
                                 "from accel.base import Backend\nfrom engine import worker\n\n\n"
                                 "def smoke(cfg):\n    worker(0, Backend(), cfg)\n"})
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == {("engine.py", 11, "XLA301"),
                                                                       ("engine.py", 18, "XLA507")}


LOGGER = '''\
class MetricLogger:
    def __init__(self):
        self.history = []

    def log(self, step, loss):
        self.history.append((step, loss))
'''

TRAINER = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from metrics import MetricLogger


class Trainer:
    def __init__(self, model, loader):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.loader = pl.MpDeviceLoader(loader, self.device)
        self.logger = MetricLogger()

    def fit(self):
        for step, (x, y) in enumerate(self.loader):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            xm.optimizer_step(self.optimizer)
            self.logger.log(step, loss)


def _mp_fn(index, model, loader):
    Trainer(model, loader).fit()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None, None))
'''


def test_a_logger_of_a_project_class_is_its_own_code_not_a_sink(tmp_path):
    # `self.logger.log(step, loss)` names a logger, but MetricLogger is project code that only
    # keeps the tensor: no read at the call (its own module reports what it reads)
    write(tmp_path, {"pyproject.toml": "", "metrics.py": LOGGER, "trainer.py": TRAINER})
    assert lint_all(tmp_path) == set()
    # a logger the project does not define is a library sink, as in single-file mode (a new
    # run: what the reach resolved for the first project is forgotten)
    from flake8_xla import project as _project
    _project.clear_cache()
    write(tmp_path, {"trainer.py": TRAINER.replace("from metrics import MetricLogger", "from tracking import MetricLogger")})
    assert lint(tmp_path, "trainer.py") == {("trainer.py", 22, "XLA501")}


EPOCH_LOOP = '''\
import torch


def train_one_epoch(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
'''

EPOCH_MAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.nn.parallel import DistributedDataParallel as DDP

from loop import train_one_epoch


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = DDP(torch.nn.Linear(4, 1).to(device), gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        train_one_epoch(model, pl.MpDeviceLoader(loader, device), optimizer)
        xm.rendezvous(f"epoch_{epoch}")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


def test_a_rendezvous_per_epoch_around_another_module_s_epoch_loop(tmp_path):
    # train_one_epoch loops over the steps itself: the loop around its call is the epoch
    # loop, and one rendezvous per epoch on every replica is fine (no XLA506)
    write(tmp_path, {"pyproject.toml": "", "loop.py": EPOCH_LOOP, "main.py": EPOCH_MAIN})
    assert lint(tmp_path, "main.py") == set()
    # a helper that runs one step per call makes the loop around it the step loop
    step = ("def train_step(model, batch, optimizer):\n    x, y = batch\n    optimizer.zero_grad()\n"
            "    torch.nn.functional.mse_loss(model(x), y).backward()\n    optimizer.step()\n")
    main = EPOCH_MAIN.replace("from loop import train_one_epoch", "from loop import train_step").replace(
        "        train_one_epoch(model, pl.MpDeviceLoader(loader, device), optimizer)\n",
        "        for batch in pl.MpDeviceLoader(loader, device):\n            train_step(model, batch, optimizer)\n"
        "            xm.rendezvous(f\"step_{epoch}\")\n")
    write(tmp_path, {"loop.py": "import torch\n\n\n" + step, "main.py": main})
    assert lint(tmp_path, "main.py") == {("main.py", 17, "XLA506")}


FACTORY = '''\
def get_strategy(name, **kwargs):
    if name == "xla":
        from .xla import XLAStrategy
        return XLAStrategy(**kwargs)
    if name == "cuda" or name == "gpu":
        from .cuda import CUDAStrategy
        return CUDAStrategy(**kwargs)
    raise ValueError(name)
'''

XLA_STRATEGY = '''\
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.nn.parallel import DistributedDataParallel as DDP


class XLAStrategy:
    def __init__(self, grad_clip=1.0):
        self.grad_clip = grad_clip

    def setup(self):
        self.device = torch_xla.device()

    def wrap_model(self, model):
        model = model.to(self.device)
        return DDP(model, gradient_as_bucket_view=True)

    def device_loader(self, loader):
        return pl.MpDeviceLoader(loader, self.device)
'''

CUDA_STRATEGY = '''\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


class CUDAStrategy:
    def __init__(self, grad_clip=1.0):
        self.grad_clip = grad_clip

    def setup(self):
        self.device = torch.device("cuda")

    def wrap_model(self, model):
        return DDP(model.to(self.device), device_ids=[0])

    def device_loader(self, loader):
        return loader
'''

RUN = '''\
import torch


def run(strategy, loader):
    strategy.setup()
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model = strategy.wrap_model(model)
    for x, y in strategy.device_loader(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        if not torch.isfinite(loss):
            continue
        loss.backward()
        optimizer.step()
'''

RUN_TPU = '''\
import torch_xla

from engine import run
from strategies import get_strategy


def _mp_fn(index, loader):
    strategy = get_strategy(NAME, grad_clip=1.0)
    run(strategy, loader)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


def strategy_project(base, name: str) -> None:
    write(base, {"pyproject.toml": "", "strategies/__init__.py": FACTORY, "strategies/xla.py": XLA_STRATEGY,
                 "strategies/cuda.py": CUDA_STRATEGY, "engine.py": RUN, "run_tpu.py": RUN_TPU.replace("NAME", name)})


def test_a_factory_s_constant_argument_picks_the_class_of_its_branch(tmp_path):
    strategy_project(tmp_path, '"xla"')
    # get_strategy("xla") builds an XLAStrategy: its wrap_model moves the model to the XLA
    # device (through a name and DDP) after the optimizer was built (XLA405), and its
    # device loader gives device tensors, so the loss test is a device read (XLA502)
    assert lint_all(tmp_path) == {("engine.py", 7, "XLA405"), ("engine.py", 11, "XLA502")}
    assert lint(tmp_path, "engine.py") == {("engine.py", 7, "XLA405"), ("engine.py", 11, "XLA502")}


@pytest.mark.parametrize("name", ['"cuda"', '"gpu"', "os.environ['STRATEGY']", '"tpu"'])
def test_a_factory_s_other_or_unknown_argument_says_nothing_of_the_class(tmp_path, name):
    strategy_project(tmp_path, name)
    if "os." in name:
        write(tmp_path, {"run_tpu.py": "import os\n" + RUN_TPU.replace("NAME", name)})
    # the CUDA branch's class, a value not seen, or a value no branch takes: no XLA class, so
    # no move to the XLA device after the optimizer (no XLA405); the loop still runs in the
    # launched XLA processes (the loss test is XLA502 as in any launched step), and the
    # model rebound by `strategy.wrap_model` may be wrapped (no XLA201 on optimizer.step())
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == {("engine.py", 11, "XLA502")}


def test_the_launch_index_handed_to_a_backend_method_is_the_rank(tmp_path):
    project(tmp_path, PLAIN)
    tpu = (tmp_path / "accel/tpu.py").read_text()
    # worker(index, backend, cfg) runs backend.setup(index): TPUBackend.setup's `index` is
    # the process index the launch gives, so the device it picks is rank-indexed (XLA402)
    (tmp_path / "accel/tpu.py").write_text(tpu.replace("self._device = torch_xla.device()",
                                                       'self._device = torch.device("xla", index)'))
    assert {f for f in lint_all(tmp_path) if f[0] == "accel/tpu.py"} == {("accel/tpu.py", 16, "XLA402")}
    assert lint(tmp_path, "accel/tpu.py") == {("accel/tpu.py", 16, "XLA402")}
    # a constant index is nobody's rank
    engine = (tmp_path / "engine.py").read_text()
    (tmp_path / "engine.py").write_text(engine.replace("backend.setup(index)", "backend.setup(0)"))
    from flake8_xla import project as _project
    _project.clear_cache()
    assert {f for f in lint_all(tmp_path) if f[0] == "accel/tpu.py"} == set()


CONFIG_MAIN = '''\
import torch
import torch_xla

import config
from strategies import get_strategy


def _worker(index):
    strategy = get_strategy(config.STRATEGY)
    strategy.setup()
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model = strategy.wrap_model(model)


if __name__ == "__main__":
    torch_xla.launch(_worker)
'''


@pytest.mark.parametrize("name, want", [("xla", {("main.py", 12, "XLA405")}), ("cuda", set())])
def test_a_module_constant_picks_the_factory_s_branch(tmp_path, name, want):
    # config.STRATEGY is a literal constant of another module: get_strategy's branch for it
    # is the class built here, in the same function (XLA405 before XLAStrategy.wrap_model's
    # move); the CUDA branch's module is never reached, so its DDP(device_ids=...) is silent
    write(tmp_path, {"pyproject.toml": "", "strategies/__init__.py": FACTORY, "strategies/xla.py": XLA_STRATEGY,
                     "strategies/cuda.py": CUDA_STRATEGY, "config.py": f'STRATEGY = "{name}"\n',
                     "main.py": CONFIG_MAIN})
    found = lint_all(tmp_path)
    assert {f for f in found if f[0] == "main.py"} == want
    assert lint(tmp_path, "main.py") == want
    if name == "xla":
        assert found == want  # strategies/cuda.py is not reached
    else:  # a CUDA strategy in launched XLA processes: its CUDA calls are reported there
        assert {f[0] for f in found} == {"strategies/cuda.py"}


def test_a_constant_a_script_assigns_is_no_constant(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "strategies/__init__.py": FACTORY, "strategies/xla.py": XLA_STRATEGY,
                     "strategies/cuda.py": CUDA_STRATEGY, "config.py": 'STRATEGY = "xla"\n',
                     "main.py": CONFIG_MAIN.replace("def _worker(index):\n",
                                                    "def _worker(index):\n    config.STRATEGY = 'cuda'\n")})
    # config.STRATEGY = 'cuda' somewhere: which class is built is unknown
    assert {f for f in lint_all(tmp_path) if f[0] == "main.py"} == set()


# -- traps a helper found (session 11): each was a wrong finding ------------------------------

STRATS = '''\
import torch
import torch_xla
from torch.nn.parallel import DistributedDataParallel as DDP


class XLAStrategy:
    def wrap_model(self, model):
        return model.to(torch_xla.device())


class DDPStrategy:
    def wrap_model(self, model):
        return DDP(model, gradient_as_bucket_view=True)


def get_strategy(name):
    if TEST:
        return XLAStrategy()
    return DDPStrategy()
'''

STRAT_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from strategies import get_strategy


def worker(index):
    strategy = get_strategy("tpu")
    model = strategy.wrap_model(torch.nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        model(torch.randn(8, 4, device=torch_xla.device())).sum().backward()
        xm.optimizer_step(opt)
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(worker)
'''


@pytest.mark.parametrize("test", ['name in ("xla", "tpu")', 'name in {"tpu"}', '"tpu" == name',
                                  'name != "ddp"', 'name.lower() == "tpu"', 'name == "tpu" and True'])
def test_a_factory_test_other_than_equality_does_not_fall_through(tmp_path, test):
    # "tpu" takes the XLA branch (read: `in`, reversed `==`) or the test is not read: never
    # the fall-through DDPStrategy (no XLA108 on xm.optimizer_step of a DDP model)
    write(tmp_path, {"pyproject.toml": "", "strategies.py": STRATS.replace("TEST", test), "train.py": STRAT_TRAIN})
    assert {f for f in lint_all(tmp_path) if f[0] == "train.py"} == set()


def test_a_factory_s_equality_picks_its_branch_and_the_fall_through_for_other_constants(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "strategies.py": STRATS.replace("TEST", 'name == "xla"'),
                     "train.py": STRAT_TRAIN})
    # "tpu" fails `name == "xla"`: DDPStrategy's DDP reduces, so xm.optimizer_step reduces twice
    assert {f for f in lint_all(tmp_path) if f[0] == "train.py"} == {("train.py", 14, "XLA108")}


def test_an_inline_module_wrapped_by_a_project_helper_is_wrapped(tmp_path):
    backend = ('import torch_xla\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n'
               'class TPUBackend:\n    def wrap_model(self, model):\n        model = model.to(torch_xla.device())\n'
               '        return DDP(model, gradient_as_bucket_view=True)\n')
    train = ('import torch\nimport torch_xla\n\nfrom backend import TPUBackend\n\n\n'
             'def worker(index, loader):\n    backend = TPUBackend()\n'
             '    model = backend.wrap_model(torch.nn.Linear(4, 2))\n'
             '    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x, y in loader:\n'
             '        torch.nn.functional.cross_entropy(model(x), y).backward()\n        opt.step()\n'
             '        torch_xla.sync()\n\n\nif __name__ == "__main__":\n    torch_xla.launch(worker, args=([],))\n')
    write(tmp_path, {"pyproject.toml": "", "backend.py": backend, "train.py": train})
    # DDP averages the gradients: opt.step() is right (no XLA201)
    assert lint_all(tmp_path) == set()


def test_a_static_method_s_first_parameter_is_the_callers_first_argument(tmp_path):
    backend = ('import torch\nimport torch_xla\n\n\nclass TPUBackend:\n    def launch(self, fn):\n'
               '        torch_xla.launch(fn, args=(self,))\n\n    @staticmethod\n    def pick(seed, dev):\n'
               '        torch.manual_seed(seed)\n        return torch.device("xla", dev)\n')
    worker = ('import torch\n\n\ndef worker(index, backend):\n    device = backend.pick(index, 0)\n'
              '    return torch.zeros(2, device=device)\n')
    main = ('from backend import TPUBackend\nfrom worker import worker\n\n\nif __name__ == "__main__":\n'
            '    TPUBackend().launch(worker)\n')
    write(tmp_path, {"pyproject.toml": "", "backend.py": backend, "worker.py": worker, "main.py": main})
    # `dev` is 0, the index is the seed: no rank-indexed device
    assert {f for f in lint_all(tmp_path) if f[0] == "backend.py"} == set()


def test_a_logger_attribute_of_two_project_classes_is_no_sink(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "metrics.py": LOGGER + "\n\nclass NullLogger:\n    def log(self, step, loss):\n"
                                                               "        pass\n",
                     "trainer.py": TRAINER.replace("from metrics import MetricLogger",
                                                   "from metrics import MetricLogger, NullLogger").replace(
                         "    def fit(self):\n", "    def reset(self):\n        self.logger = NullLogger()\n\n    def fit(self):\n")})
    assert lint_all(tmp_path) == set()


LAUNCHERS = '''\
import torch_xla
import torch_xla.runtime as xr


class SPMDBackend:
    def launch(self, fn, *args):
        xr.use_spmd()
        fn(0, self, *args)


class MultiProcessBackend:
    def launch(self, fn, *args):
        torch_xla.launch(fn, args=(self,) + tuple(args))


class EightChips(MultiProcessBackend):
    pass
'''

LAUNCH_WORKER = '''\
import torch
import torch_xla


def worker(index, backend, loader):
    model = torch.nn.Linear(4, 2).to(torch_xla.device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        torch_xla.sync()
'''


@pytest.mark.parametrize("backend, want", [("SPMDBackend", set()),
                                           ("MultiProcessBackend", {("worker.py", 10, "XLA201")}),
                                           ("EightChips", {("worker.py", 10, "XLA201")})])
def test_a_launch_named_like_a_wrapper_launches_only_on_the_wrapper_s_class(tmp_path, backend, want):
    # SPMDBackend.launch runs the worker in this process (SPMD: no replicas to reduce across);
    # MultiProcessBackend.launch (and a subclass's, inherited) starts replicas: opt.step()
    # without a reduction is XLA201 there
    main = f"from backends import {backend}\nfrom worker import worker\n\n\nif __name__ == \"__main__\":\n" \
           f"    {backend}().launch(worker, [])\n"
    write(tmp_path, {"pyproject.toml": "", "backends.py": LAUNCHERS, "worker.py": LAUNCH_WORKER, "main.py": main})
    assert lint_all(tmp_path) == want

"""A loader's value across modules (issue 28: values through returns, arguments and attributes).

A ``DataLoader`` built in one module is trained on in another when its value reaches a
training step loop there: returned by an override that wraps ``super()``'s loader, handed
through a strategy method that gives its argument back in a device loader, handed to a
class whose step loop iterates ``self.train_loader``, or handed through such a wrapper to
another module's loop function. Each shape gives XLA304 (no ``drop_last``) or XLA303 (no
sampler) at the ``DataLoader(...)`` call, linted with every file and each file alone; the
same loader that only a CPU script or an evaluation loop uses stays silent.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")


def both(base, expected: set) -> None:
    """The finding set over all files, and again file by file from a cold project cache."""
    assert lint_all(base) == expected
    project.clear_cache()
    alone = set()
    for path in sorted(base.rglob("*.py")):
        project.clear_cache()
        alone |= lint(base, path.relative_to(base).as_posix())
    assert alone == expected


TRAINER = '''\
import torch
from torch.utils.data import DataLoader, DistributedSampler


class Trainer:
    def __init__(self, model, data):
        self.model = model
        self.data = data
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_dataloader(self):
        sampler = DistributedSampler(self.data, num_replicas=self.world(), rank=self.rank())
        return DataLoader(self.data, batch_size=8, sampler=sampler)

    def world(self):
        return 1

    def rank(self):
        return 0

    def step(self):
        self.opt.step()

    def fit(self):
        for epoch in range(2):
            for batch in self.train_dataloader():
                self.model(batch).sum().backward()
                self.step()
'''

XLA_TRAINER = '''\
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .trainer import Trainer


class XlaTrainer(Trainer):
    def world(self):
        return xr.world_size()

    def rank(self):
        return xr.global_ordinal()

    def train_dataloader(self):
        loader = super().train_dataloader()
        return pl.MpDeviceLoader(loader, torch_xla.device())

    def step(self):
        xm.optimizer_step(self.opt)
'''

RUN_TRAINER = '''\
import torch
import torch_xla

from kit.xla import XlaTrainer


def _mp_fn(index):
    model = torch.nn.Linear(4, 4).to(torch_xla.device())
    XlaTrainer(model, list(range(64))).fit()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_an_override_returning_the_base_loader_wrapped(tmp_path):
    # fit iterates self.train_dataloader(): the override wraps super()'s DataLoader
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": TRAINER,
                     "kit/xla.py": XLA_TRAINER, "run.py": RUN_TRAINER})
    both(tmp_path, {("kit/trainer.py", 13, "XLA304")})


def test_the_base_loader_without_a_launched_subclass_is_silent(tmp_path):
    cpu = RUN_TRAINER.replace("import torch_xla\n", "").replace("from kit.xla import XlaTrainer", "from kit.trainer import Trainer") \
        .replace(".to(torch_xla.device())", "").replace("XlaTrainer(", "Trainer(") \
        .replace("    torch_xla.launch(_mp_fn)", "    _mp_fn(0)")
    write(tmp_path, {"pyproject.toml": "", "kit/__init__.py": "", "kit/trainer.py": TRAINER,
                     "kit/xla.py": XLA_TRAINER, "run_cpu.py": cpu})
    both(tmp_path, set())


DATA = '''\
from torch.utils.data import DataLoader


def build_loader(dataset, batch_size, sampler=None):
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)
'''

STRATEGY = '''\
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class XlaStrategy:
    device = None

    def device_loader(self, loader):
        return pl.ParallelLoader(loader, [self.device]).per_device_loader(self.device)

    def optimizer_step(self, opt):
        xm.optimizer_step(opt)
'''

ENGINE = '''\
from data import build_loader


def run(strategy, model, opt, train_ds, sampler):
    train_loader = build_loader(train_ds, 32, sampler=sampler)
    batches = strategy.device_loader(train_loader)
    for epoch in range(3):
        for x in batches:
            model(x).sum().backward()
            strategy.optimizer_step(opt)
'''

RUN_STRATEGY = '''\
import torch
import torch_xla
import torch_xla.runtime as xr
from torch.utils.data import DistributedSampler

from engine import run
from strategy import XlaStrategy


def _mp_fn(index):
    model = torch.nn.Linear(4, 4).to(torch_xla.device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = list(range(64))
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    run(XlaStrategy(), model, opt, ds, sampler)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_loader_a_strategy_method_gives_back(tmp_path):
    # build_loader's DataLoader -> strategy.device_loader(loader) -> the step loop of run;
    # the one-shot per_device_loader iterated every epoch is XLA306's, in strategy.py
    write(tmp_path, {"pyproject.toml": "", "data.py": DATA, "strategy.py": STRATEGY, "engine.py": ENGINE,
                     "run.py": RUN_STRATEGY})
    found = lint_all(tmp_path)
    assert ("data.py", 5, "XLA304") in found
    assert {f for f in found if f[0] == "data.py"} == {("data.py", 5, "XLA304")}
    project.clear_cache()
    assert lint(tmp_path, "data.py") == {("data.py", 5, "XLA304")}


def test_a_strategy_method_that_keeps_its_argument_is_no_pass_through(tmp_path):
    # device_loader returns a loader of its own: the argument is not what the loop iterates
    strategy = STRATEGY.replace("return pl.ParallelLoader(loader, [self.device]).per_device_loader(self.device)",
                                "return pl.MpDeviceLoader(self.fixed, self.device)")
    write(tmp_path, {"pyproject.toml": "", "data.py": DATA, "strategy.py": strategy, "engine.py": ENGINE,
                     "run.py": RUN_STRATEGY})
    assert lint(tmp_path, "data.py") == set()


LOOP = '''\
import torch_xla
import torch_xla.core.xla_model as xm


class TrainLoop:
    def __init__(self, model, opt, train_loader, val_loader):
        self.model = model
        self.opt = opt
        self.train_loader = train_loader
        self.val_loader = val_loader

    def fit(self):
        for x in self.train_loader:
            self.model(x).sum().backward()
            xm.optimizer_step(self.opt)
        for x in self.val_loader:
            self.model(x)
'''

RUN_LOOP = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset

from loop import TrainLoop


def _mp_fn(index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = TensorDataset(torch.zeros(64, 4))
    train = DataLoader(ds, batch_size=8, shuffle=True, drop_last=True)
    val = DataLoader(ds, batch_size=8)
    TrainLoop(model, opt, pl.MpDeviceLoader(train, device), pl.MpDeviceLoader(val, device)).fit()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_loader_handed_to_a_class_whose_loop_iterates_the_attribute(tmp_path):
    # the training loader (no sampler) reaches TrainLoop.fit's step loop as self.train_loader:
    # XLA303; the validation loader feeds an evaluation loop only (no XLA303/XLA304)
    write(tmp_path, {"pyproject.toml": "", "loop.py": LOOP, "run.py": RUN_LOOP})
    both(tmp_path, {("run.py", 14, "XLA303")})


def test_a_loader_handed_in_a_cpu_script_is_silent(tmp_path):
    run = RUN_LOOP.replace("    torch_xla.launch(_mp_fn)", "    _mp_fn(0)").replace(
        "pl.MpDeviceLoader(train, device)", "train").replace("pl.MpDeviceLoader(val, device)", "val") \
        .replace("import torch_xla.distributed.parallel_loader as pl\n", "").replace(
        "import torch_xla\n", "").replace("    device = torch_xla.device()\n", '    device = "cpu"\n')
    write(tmp_path, {"pyproject.toml": "", "loop.py": LOOP, "run_cpu.py": run})
    assert lint(tmp_path, "run_cpu.py") == set()


FIT = '''\
import torch_xla.core.xla_model as xm


class Meter:
    def __init__(self):
        self.n = 0


def train_one_epoch(model, opt, loader, meter):
    for x in loader:
        model(x).sum().backward()
        xm.optimizer_step(opt)
'''

RUN_FIT = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from data import build_loader
from fit import Meter, train_one_epoch


def _mp_fn(index, ds, sampler):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = pl.MpDeviceLoader(build_loader(ds, 16, sampler=sampler), device)
    train_one_epoch(model, opt, loader, Meter())


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([], None))
'''


def test_a_loader_handed_to_another_modules_loop_beside_another_call(tmp_path):
    # build_loader's DataLoader -> MpDeviceLoader -> train_one_epoch's step loop; Meter() is
    # called on the same line and takes no loader (each receiving call is told by its name)
    write(tmp_path, {"pyproject.toml": "", "data.py": DATA, "fit.py": FIT, "run.py": RUN_FIT})
    both(tmp_path, {("data.py", 5, "XLA304")})


BACKENDS_MOD = '''\
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DistributedSampler, RandomSampler


class Backend:
    def sampler(self, dataset):
        return RandomSampler(dataset)


class TpuBackend(Backend):
    def wrap_loader(self, loader):
        return pl.MpDeviceLoader(loader, torch_xla.device())
'''

ENGINE_SAMPLER = '''\
import torch
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((4,), float(i * i))


def train_worker(index, backend):
    model = torch.nn.Linear(4, 4).to(xm.xla_device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dataset = Squares()
    loader = DataLoader(dataset, batch_size=8, sampler=backend.sampler(dataset), drop_last=True)
    for x in backend.wrap_loader(loader):
        model(x).sum().backward()
        xm.optimizer_step(opt)
'''

RUN_SAMPLER = '''\
import torch_xla

from backends import TpuBackend
from engine import train_worker

if __name__ == "__main__":
    torch_xla.launch(train_worker, args=(TpuBackend(),))
'''


def test_a_whole_dataset_sampler_a_backend_method_returns(tmp_path):
    # TpuBackend inherits Backend.sampler: a RandomSampler, so every replica sees every sample
    write(tmp_path, {"pyproject.toml": "", "backends.py": BACKENDS_MOD, "engine.py": ENGINE_SAMPLER,
                     "run.py": RUN_SAMPLER})
    found = lint_all(tmp_path)
    assert {f for f in found if f[2] == "XLA303"} == {("engine.py", 18, "XLA303")}


def test_an_override_returning_a_distributed_sampler_is_silent(tmp_path):
    backends = BACKENDS_MOD + '''
    def sampler(self, dataset):
        return DistributedSampler(dataset, num_replicas=xr.world_size(), rank=xr.global_ordinal())
'''
    write(tmp_path, {"pyproject.toml": "", "backends.py": backends, "engine.py": ENGINE_SAMPLER,
                     "run.py": RUN_SAMPLER})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA303"} == set()


LOADERS = '''\
from torch.utils.data import DataLoader


def build_loaders(train_ds, val_ds, sampler):
    train_loader = DataLoader(train_ds, batch_size=32, sampler=sampler)
    val_loader = DataLoader(val_ds, batch_size=64)
    return train_loader, val_loader
'''

STEP = '''\
import torch
import torch_xla.core.xla_model as xm


def train_step(model, batch, opt, accum=2):
    for x in batch.chunk(accum):
        (model(x).sum() / accum).backward()
    xm.optimizer_step(opt)
'''

RUN_ITEMS = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from loaders import build_loaders
from step import train_step


def _mp_fn(index, train_ds, val_ds, sampler):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader, val_loader = build_loaders(train_ds, val_ds, sampler)
    for epoch in range(2):
        for batch in pl.MpDeviceLoader(train_loader, device):
            train_step(model, batch, opt)
        for batch in pl.MpDeviceLoader(val_loader, device):
            model(batch)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([], [], None))
'''


def test_the_trained_item_of_a_returned_tuple_through_an_accumulating_step(tmp_path):
    # train_loader (item 0) feeds a loop whose one step is train_step (backward per
    # micro-batch, one update); val_loader (item 1) feeds evaluation only
    write(tmp_path, {"pyproject.toml": "", "loaders.py": LOADERS, "step.py": STEP, "run.py": RUN_ITEMS})
    both(tmp_path, {("loaders.py", 5, "XLA304")})


DICT_LOADERS = '''\
from torch.utils.data import DataLoader


def get_loaders(train_ds, val_ds, sampler):
    return {
        "train": DataLoader(train_ds, batch_size=32, sampler=sampler),
        "val": DataLoader(val_ds, batch_size=64),
    }
'''

RUN_DICT = RUN_ITEMS.replace("from loaders import build_loaders", "from loaders import get_loaders").replace(
    "    train_loader, val_loader = build_loaders(train_ds, val_ds, sampler)\n",
    "    loaders = get_loaders(train_ds, val_ds, sampler)\n").replace(
    "pl.MpDeviceLoader(train_loader, device)", 'pl.MpDeviceLoader(loaders["train"], device)').replace(
    "pl.MpDeviceLoader(val_loader, device)", 'pl.MpDeviceLoader(loaders["val"], device)')


def test_the_trained_value_of_a_returned_dict_by_key(tmp_path):
    # loaders["train"] feeds the step loop; loaders["val"] feeds evaluation only
    write(tmp_path, {"pyproject.toml": "", "loaders.py": DICT_LOADERS, "step.py": STEP, "run.py": RUN_DICT})
    both(tmp_path, {("loaders.py", 6, "XLA304")})


ONE_SHOT = '''\
import torch_xla.distributed.parallel_loader as pl


def device_loader(loader, device):
    return pl.ParallelLoader(loader, [device]).per_device_loader(device)
'''

EPOCH = '''\
import torch_xla.core.xla_model as xm


def train_epoch(model, opt, batches):
    for x in batches:
        model(x).sum().backward()
        xm.optimizer_step(opt)
'''

RUN_EPOCHS = '''\
import torch
import torch_xla

from epoch import train_epoch
from oneshot import device_loader


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = device_loader(loader, device)
    for epoch in range(3):
        train_epoch(model, opt, batches)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=([],))
'''


def test_a_one_shot_loader_handed_to_another_modules_epoch_function(tmp_path):
    # the per_device_loader is built once and iterated by train_epoch every epoch: spent
    write(tmp_path, {"pyproject.toml": "", "oneshot.py": ONE_SHOT, "epoch.py": EPOCH, "run.py": RUN_EPOCHS})
    both(tmp_path, {("oneshot.py", 5, "XLA306")})


def test_a_one_shot_loader_built_every_epoch_is_silent(tmp_path):
    run = RUN_EPOCHS.replace("    batches = device_loader(loader, device)\n    for epoch in range(3):\n",
                             "    for epoch in range(3):\n        batches = device_loader(loader, device)\n")
    write(tmp_path, {"pyproject.toml": "", "oneshot.py": ONE_SHOT, "epoch.py": EPOCH, "run.py": run})
    both(tmp_path, set())

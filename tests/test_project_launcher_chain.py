"""Launcher objects, Lightning style (issue 28): values the reach follows through objects.

- An object's attributes hold what its ``__init__`` stores (``self.launcher =
  XLALauncher(self)``, ``self.strategy = strategy or CPUStrategy()``), read through chains
  (``self.strategy.launcher.launch(...)``, ``trainer.strategy.optimizer_step(...)``).
- A bound method is a value (``launch(self._run, ...)``), and a ``*args`` tuple is spliced
  into a call (``function(*args)``, ``args=(self._strategy, *args)``).
- An object whose ``__init__`` stores an attribute in branches over a constructor argument
  (``if accelerator == "tpu": self.strategy = XLAStrategy(self)``) is followed once per
  branch, so the launched code runs with the strategy whose launcher launched it.
- A script that builds a class whose constructor builds a launching class is an entry.
- The module's rules ask what the reach resolved a chain call to (XLA203 before
  ``trainer.strategy.optimizer_step``), and the methods it resolved know their callers
  (XLA501 in a callback fired over ``trainer.callbacks``).
"""

from __future__ import annotations

import pytest

from flake8_xla.project import constants
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

LAUNCHER = '''\
import torch_xla.distributed.xla_multiprocessing as xmp


class XLALauncher:
    def __init__(self, strategy):
        self._strategy = strategy

    def launch(self, function, *args):
        xmp.spawn(function, args=(self._strategy, *args))
'''

STRATEGY = '''\
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr

from .launcher import XLALauncher


class XLAStrategy:
    def __init__(self, devices=8):
        self.devices = devices
        self.launcher = XLALauncher(self)

    def process_dataloader(self, loader):
        return pl.MpDeviceLoader(loader, torch_xla.device())

    def optimizer_step(self, optimizer):
        return xm.optimizer_step(optimizer)
'''

FABRIC_SCRIPT = '''\
import torch
import torch.nn.functional as F

from fabric.strategy import XLAStrategy


def train(index, strategy, loader, model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in strategy.process_dataloader(loader):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        strategy.optimizer_step(optimizer)
        print(loss.item())


if __name__ == "__main__":
    strategy = XLAStrategy(devices=8)
    strategy.launcher.launch(train, None, None)
'''


def fabric_project(base) -> None:
    write(base, {"pyproject.toml": "", "fabric/__init__.py": "", "fabric/launcher.py": LAUNCHER,
                 "fabric/strategy.py": STRATEGY, "train.py": FABRIC_SCRIPT})


def test_a_function_a_strategy_launcher_launches_runs_with_that_strategy(tmp_path):
    # strategy.launcher is what XLAStrategy.__init__ stores; the launcher hands its
    # self._strategy on in args=(self._strategy, *args): train's strategy is an XLAStrategy
    fabric_project(tmp_path)
    assert lint_all(tmp_path) == {("train.py", 13, "XLA203"), ("train.py", 15, "XLA501")}
    assert lint(tmp_path, "train.py") == {("train.py", 13, "XLA203"), ("train.py", 15, "XLA501")}


def test_a_gpu_script_beside_the_launcher_stays_plain(tmp_path):
    fabric_project(tmp_path)
    gpu = FABRIC_SCRIPT.replace("from fabric.strategy import XLAStrategy", "import torch.multiprocessing as mp") \
        .replace("    strategy = XLAStrategy(devices=8)\n    strategy.launcher.launch(train, None, None)\n",
                 "    mp.spawn(train, args=(None, None, None))\n")
    write(tmp_path, {"gpu_train.py": gpu})
    assert {f for f in lint_all(tmp_path) if f[0] == "gpu_train.py"} == set()


TRAINER = '''\
from .launchers import Launcher
from .loops import FitLoop
from .strategies import Strategy, TPUStrategy


class Trainer:
    def __init__(self, accelerator="cpu", callbacks=None, clip=None):
        if accelerator == "tpu":
            self.strategy = TPUStrategy(self)
        else:
            self.strategy = Strategy(self)
        self.callbacks = list(callbacks or [])
        self.clip = clip
        self.fit_loop = FitLoop(self)

    def fit(self, module):
        launcher = self.strategy.launcher
        if launcher is not None:
            launcher.launch(self._run, module)
        else:
            self._run(module)

    def _run(self, module):
        optimizer = module.configure_optimizers()
        self.fit_loop.run(module, optimizer)
'''

LAUNCHERS = '''\
import torch_xla.distributed.xla_multiprocessing as xmp


class Launcher:
    def __init__(self, strategy):
        self.strategy = strategy

    def launch(self, function, *args):
        xmp.spawn(self._wrapping, args=(function, args))

    def _wrapping(self, index, function, args):
        return function(*args)
'''

STRATEGIES = '''\
import torch
import torch_xla.core.xla_model as xm

from .launchers import Launcher


class Strategy:
    launcher = None

    def __init__(self, trainer):
        self.trainer = trainer

    def optimizer_step(self, optimizer):
        optimizer.step()

    def save(self, state, path):
        torch.save(state, path)


class TPUStrategy(Strategy):
    def __init__(self, trainer):
        super().__init__(trainer)
        self.launcher = Launcher(self)

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)

    def save(self, state, path):
        xm.save(state, path)
'''

LOOPS = '''\
import torch


class FitLoop:
    def __init__(self, trainer):
        self.trainer = trainer

    def run(self, module, optimizer):
        trainer = self.trainer
        for batch in module.loader():
            outputs = module.training_step(batch)
            loss = outputs["loss"]
            loss.backward()
            if trainer.clip:
                torch.nn.utils.clip_grad_norm_(module.parameters(), trainer.clip)
            trainer.strategy.optimizer_step(optimizer)
            for cb in trainer.callbacks:
                cb.on_batch_end(trainer, outputs)
'''

CALLBACKS = '''\
class Printer:
    def on_batch_end(self, trainer, outputs):
        print(outputs["loss"].item())
'''

LIT_SCRIPT = '''\
import argparse

from lit.callbacks import Printer
from lit.trainer import Trainer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--accelerator", default="tpu")
    args = p.parse_args()
    trainer = Trainer(accelerator=args.accelerator, callbacks=[Printer()], clip=1.0)
    trainer.fit(None)


if __name__ == "__main__":
    main()
'''


def lit_project(base) -> None:
    write(base, {"pyproject.toml": "", "lit/__init__.py": "", "lit/trainer.py": TRAINER,
                 "lit/launchers.py": LAUNCHERS, "lit/strategies.py": STRATEGIES, "lit/loops.py": LOOPS,
                 "lit/callbacks.py": CALLBACKS, "train.py": LIT_SCRIPT})


def test_a_trainer_told_apart_by_its_accelerator_runs_the_tpu_strategy_in_its_launch(tmp_path):
    # the TPU trainer's launcher spawns its bound _wrapping, which runs function(*args):
    # the bound Trainer._run of that same trainer, whose strategy is the TPUStrategy; the fit
    # loop clips before trainer.strategy.optimizer_step (xm.optimizer_step), and the callback
    # fired over trainer.callbacks reads the device loss every step. The base Strategy's
    # plain optimizer.step() and torch.save run only on the CPU trainer: silent.
    lit_project(tmp_path)
    expected = {("lit/loops.py", 15, "XLA203"), ("lit/callbacks.py", 3, "XLA501")}
    assert lint_all(tmp_path) == expected
    assert lint(tmp_path, "lit/loops.py") | lint(tmp_path, "lit/callbacks.py") == expected


def test_a_trainer_built_for_the_cpu_only_launches_nothing(tmp_path):
    lit_project(tmp_path)
    write(tmp_path, {"train.py": LIT_SCRIPT.replace("Trainer(accelerator=args.accelerator,",
                                                    'Trainer(accelerator="cpu",')})
    assert lint_all(tmp_path) == set()


DIST = '''\
import torch_xla.runtime as xr


def get_rank():
    return xr.global_ordinal()


def get_world_size():
    return xr.world_size()
'''

SHARDED = '''\
import glob

import torch
from torch.utils.data import Dataset

from dist import get_rank, get_world_size


class Shards(Dataset):
    def __init__(self, pattern):
        self.files = sorted(glob.glob(pattern))[get_rank()::get_world_size()]

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return torch.load(self.files[i])
'''

SHARD_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader

from data import Shards


def run(index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(Shards("*.pt"), batch_size=8, drop_last=True)
    for x in pl.MpDeviceLoader(loader, device):
        model(x).sum().backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    torch_xla.launch(run)
'''


@pytest.mark.parametrize("files, expected", [
    ("[get_rank()::get_world_size()]", set()),
    ("", {("train.py", 14, "XLA303")}),  # (the same dataset without its shard: every replica reads all)
])
def test_a_dataset_sharded_by_a_rank_helper_of_another_module_is_no_plain_dataset(tmp_path, files, expected):
    write(tmp_path, {"pyproject.toml": "", "dist.py": DIST, "train.py": SHARD_TRAIN,
                     "data.py": SHARDED.replace("[get_rank()::get_world_size()]", files)})
    assert lint_all(tmp_path) == expected


PREPARE = '''\
import torch_xla
import torch_xla.core.xla_model as xm


class WrappedOptimizer:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def step(self):
        xm.optimizer_step(self.optimizer)


def prepare(model, optimizer):
    return model.to(torch_xla.device()), WrappedOptimizer(optimizer)
'''

BUILD = '''\
import torch

from accel import prepare


def build(cfg):
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return prepare(model, optimizer)
'''

PREPARED_TRAIN = '''\
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from factory import build


def run(index, loader):
    model, optimizer = build(None)
    for x in pl.MpDeviceLoader(loader, torch_xla.device()):
        model(x).sum().backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    torch_xla.launch(run, args=(None,))
'''


def test_an_optimizer_another_module_hands_back_is_not_taken_for_a_torch_one(tmp_path):
    # build() returns prepare()'s WrappedOptimizer, whose step is xm.optimizer_step: not XLA201
    write(tmp_path, {"pyproject.toml": "", "accel.py": PREPARE, "factory.py": BUILD, "train.py": PREPARED_TRAIN})
    assert lint_all(tmp_path) == set()


def test_a_spliced_tuple_fills_the_positions_from_the_splat_on():
    args = ((0, None, ("chain", "fn")), (1, constants.SPLAT, ("chain", "args")))
    context = {"fn": ("fn", ("f.py", "g")), "args": ("tuple", (("str", "a"), None, ("int", 3)))}
    assert constants.bind(args, context, ("fn", "x", "y", "z")) == {"fn": ("fn", ("f.py", "g")), "x": ("str", "a"),
                                                                     "z": ("int", 3)}


def test_branch_values_are_decided_per_constant_and_the_other_value():
    alts = ("alts", (((("acc", ("str", "tpu"), True, False),), ("const", ("str", "xla"))),
                     ((("acc", ("str", "tpu"), False, False),), ("const", ("str", "cpu")))))
    assert constants._value(alts, {"acc": ("str", "tpu")}, None) == ("str", "xla")
    assert constants._value(alts, {"acc": constants.OTHER}, None) == ("str", "cpu")
    assert constants._value(alts, {}, None) is None  # (not told: unknown)


ENVS = '''\
def get_env(cfg):
    if cfg.device == "tpu":
        from .tpu import TpuEnv
        return TpuEnv(cfg)
    if cfg.device == "cuda":
        from .cuda import CudaEnv
        return CudaEnv(cfg)
    raise ValueError(cfg.device)
'''

ENV_BASE = '''\
import torch


class DeviceEnv:
    def __init__(self, cfg):
        self.cfg = cfg

    def run(self, fn, cfg):
        fn(self, cfg)

    def compile(self, model):
        return torch.compile(model)

    def save(self, state, path):
        torch.save(state, path)
'''

ENV_TPU = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from .base import DeviceEnv


class TpuEnv(DeviceEnv):
    def run(self, fn, cfg):
        torch_xla.launch(self._entry, args=(fn, cfg))

    def _entry(self, index, fn, cfg):
        fn(self, cfg)

    def save(self, state, path):
        xm.save(state, path)
'''

ENV_CUDA = '''\
import torch

from .base import DeviceEnv


class CudaEnv(DeviceEnv):
    def step(self):
        torch.cuda.synchronize()
'''

ENGINE = '''\
import torch


def train(env, cfg):
    model = env.compile(torch.nn.Linear(4, 2))
    if env.cfg.rank == 0:
        env.save(model.state_dict(), "last.pt")
'''

ENV_SCRIPT = '''\
import argparse

from engine import train
from envs import get_env


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    cfg = p.parse_args()
    env = get_env(cfg)
    env.run(train, cfg)


if __name__ == "__main__":
    main()
'''


def test_a_factory_the_script_calls_with_an_unknown_device_gives_each_environment(tmp_path):
    # get_env(cfg) may return the TPU or the CUDA environment: each is followed as its own
    # object, and only the TPU one launches (its own _entry, bound, runs train(self, cfg)):
    # train runs with a TpuEnv, whose inherited compile has no backend= (XLA403, in a module
    # without torch_xla); the CUDA environment and the base save stay plain.
    write(tmp_path, {"pyproject.toml": "", "envs/__init__.py": ENVS, "envs/base.py": ENV_BASE,
                     "envs/tpu.py": ENV_TPU, "envs/cuda.py": ENV_CUDA, "engine.py": ENGINE, "launch.py": ENV_SCRIPT})
    # (the save under a rank test is TpuEnv's xm.save: XLA602 at the guarded call)
    assert lint_all(tmp_path) == {("envs/base.py", 12, "XLA403"), ("engine.py", 7, "XLA602")}


def test_the_cuda_environment_alone_launches_nothing(tmp_path):
    script = ENV_SCRIPT.replace("from envs import get_env", "from envs.cuda import CudaEnv") \
        .replace("get_env(cfg)", "CudaEnv(cfg)")
    write(tmp_path, {"pyproject.toml": "", "envs/__init__.py": ENVS, "envs/base.py": ENV_BASE,
                     "envs/tpu.py": ENV_TPU, "envs/cuda.py": ENV_CUDA, "engine.py": ENGINE, "launch.py": script})
    assert lint_all(tmp_path) == set()


SEEDS = '''\
import random

import torch
import torch_xla


def set_seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    torch_xla.manual_seed(seed)


def set_host_seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)
'''

SPMD_SCRIPT = '''\
import torch_xla
import torch_xla.runtime as xr

from seeds import {seed}


def main():
    {seed}(0)
    xr.use_spmd()
    device = torch_xla.device()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("seed, expected", [
    ("set_seed", {("train.py", 9, "XLA906")}),  # the helper seeds the device RNG: the runtime started
    ("set_host_seed", set()),
])
def test_a_helper_of_another_module_that_starts_the_runtime_before_use_spmd(tmp_path, seed, expected):
    write(tmp_path, {"pyproject.toml": "", "seeds.py": SEEDS, "train.py": SPMD_SCRIPT.format(seed=seed)})
    assert lint_all(tmp_path) == expected


OPTIM_FACTORY = '''\
import torch
from torch_xla.distributed.zero_redundancy_optimizer import ZeroRedundancyOptimizer


def build_optimizer(model):
    return ZeroRedundancyOptimizer(model.parameters(), torch.optim.AdamW, lr=1e-3)


def plain_optimizer(model):
    return torch.optim.AdamW(model.parameters(), lr=1e-3)
'''

LOOP = '''\
import torch
import torch_xla


def run(model, opt):
    for _ in range(3):
        model(torch.randn(2, 4, device=torch_xla.device())).sum().backward()
        opt.step()
        torch_xla.sync()
'''

ZERO_TRAIN = '''\
import torch
import torch_xla

from loop import run
from optim_factory import {builder}


def _mp_fn(index):
    model = torch.nn.Linear(4, 4).to(torch_xla.device())
    run(model, {builder}(model))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


@pytest.mark.parametrize("builder, expected", [
    ("build_optimizer", set()),  # a ZeRO-1 optimizer another module builds reduces the gradients
    ("plain_optimizer", {("loop.py", 8, "XLA201")}),
])
def test_a_reduction_a_factory_of_the_launched_code_builds_counts(tmp_path, builder, expected):
    write(tmp_path, {"pyproject.toml": "", "optim_factory.py": OPTIM_FACTORY, "loop.py": LOOP,
                     "train.py": ZERO_TRAIN.format(builder=builder)})
    assert lint_all(tmp_path) == expected

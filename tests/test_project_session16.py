"""Session 16's project-mode pieces (issue 28), each with its traps.

- A helper of a module that imports torch_xla, called once per step from another module's
  step loop, is asked who calls it when it reads a parameter on the host itself
  (``def log_loss(loss, step): value = loss.item()``): XLA501 on the read. Called after the
  loop, or through ``xm.add_step_closure``, it stays silent.
"""

from __future__ import annotations

import pytest

from flake8_xla.project import clear_cache
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

METRICS = '''\
import torch_xla.core.xla_model as xm


def log_loss(loss, step):
    value = loss.item()
    xm.master_print(f"step {step} loss {value}")


def summary(loss):
    return float(loss)
'''

TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from metrics import log_loss, summary


def main(index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal())
    loader = pl.MpDeviceLoader(DataLoader(ds, batch_size=8, sampler=sampler, drop_last=True), device)
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        xm.optimizer_step(opt)
        {call}
    summary(loss)


if __name__ == "__main__":
    torch_xla.launch(main)
'''


@pytest.mark.parametrize("call, expected", [
    ("log_loss(loss, step)", {("metrics.py", 5, "XLA501")}),
    ("xm.add_step_closure(log_loss, args=(loss, step))", set()),
    ("pass", set()),
])
def test_torch_xla_helper_module_read_per_step(tmp_path, call, expected):
    write(tmp_path, {"pyproject.toml": "", "metrics.py": METRICS, "train.py": TRAIN.replace("{call}", call)})
    assert lint_all(tmp_path) == expected
    assert lint(tmp_path, "metrics.py") == expected


# --- registries: classes and functions looked up by name ------------------------------------

REGISTRY = '''\
MODELS = {}


def register_model(name):
    def decorator(cls):
        MODELS[name] = cls
        return cls
    return decorator


def build_model(name, cfg):
    cls = MODELS[name]
    return cls(cfg)
'''

MODELS = '''\
import torch.nn as nn
import torch.nn.functional as F

from registry import register_model


@register_model("gpt")
class TinyGPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.head = nn.Linear(8, 8)

    def forward(self, x, targets):
        keep = targets != -100
        return F.cross_entropy(self.head(x)[keep], targets[keep])


@register_model("lstm")
class LSTMLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.head = nn.Linear(8, 8)

    def forward(self, x, targets):
        return F.cross_entropy(self.head(x), targets, ignore_index=-100)
'''

REGISTRY_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

import models  # noqa: F401  (fills the registry)
from registry import build_model


def run(index, cfg, loader):
    device = torch_xla.device()
    model = build_model(cfg.model, cfg).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in pl.MpDeviceLoader(loader, device):
        opt.zero_grad()
        loss = model(x, y)
        loss.backward()
        xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(run, args=(None, None))
'''


def test_decorator_registry_reaches_every_registered_class(tmp_path):
    """``@register_model("gpt")`` puts the class in ``MODELS``; ``build_model(cfg.model,
    cfg).to(device)`` is one of the registered models, whose ``forward`` runs per step."""
    write(tmp_path, {"pyproject.toml": "", "registry.py": REGISTRY, "models.py": MODELS, "train.py": REGISTRY_TRAIN})
    expected = {("models.py", 15, "XLA503")}
    assert lint_all(tmp_path) == expected
    assert lint(tmp_path, "models.py") == expected


def test_registry_literal_key_selects_its_item(tmp_path):
    """``build_model("lstm", cfg)``: only ``LSTMLM`` is built; TinyGPT's forward never runs."""
    train = REGISTRY_TRAIN.replace("build_model(cfg.model, cfg)", 'build_model("lstm", cfg)')
    write(tmp_path, {"pyproject.toml": "", "registry.py": REGISTRY, "models.py": MODELS, "train.py": train})
    assert lint_all(tmp_path) == set()


def test_unregistered_model_module_stays_plain(tmp_path):
    """Without the registry lookup, nothing reaches the model module."""
    train = REGISTRY_TRAIN.replace("build_model(cfg.model, cfg).to(device)", "torch.nn.Linear(8, 8).to(device)")
    write(tmp_path, {"pyproject.toml": "", "registry.py": REGISTRY, "models.py": MODELS, "train.py": train})
    assert lint_all(tmp_path) == set()


TRAINERS_BASE = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl


class BaseTrainer:
    def __init__(self, model, loader):
        self.device = torch_xla.device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters())
        self.loader = pl.MpDeviceLoader(loader, self.device)

    def compute_loss(self, batch):
        raise NotImplementedError

    def step_optimizer(self):
        self.optimizer.step()

    def train(self):
        for batch in self.loader:
            self.optimizer.zero_grad()
            loss = self.compute_loss(batch)
            loss.backward()
            self.step_optimizer()
'''

TRAINERS_TASKS = '''\
import torch.nn.functional as F
import torch_xla.core.xla_model as xm

from trainers.base import BaseTrainer


class LMTrainer(BaseTrainer):
    def compute_loss(self, batch):
        ids, labels = batch["input_ids"], batch["labels"]
        keep = labels != -100
        return F.cross_entropy(self.model(ids)[keep], labels[keep])

    def step_optimizer(self):
        xm.optimizer_step(self.optimizer)


class ClsTrainer(BaseTrainer):
    def compute_loss(self, batch):
        return F.cross_entropy(self.model(batch["input_ids"]), batch["label"])

    def step_optimizer(self):
        xm.optimizer_step(self.optimizer)
'''

TRAINERS_INIT = '''\
from trainers.tasks import ClsTrainer, LMTrainer

TRAINER_DICT = {"lm": LMTrainer, "cls": ClsTrainer}
'''

TRAINERS_MAIN = '''\
import torch
import torch_xla

from trainers import TRAINER_DICT


def _mp_fn(index, args, loader):
    model = torch.nn.Linear(4, 4)
    trainer = TRAINER_DICT[args.task](model, loader)
    trainer.train()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None, None))
'''


def test_dict_registry_builds_each_subclass_the_base_loop_dispatches_on(tmp_path):
    """``TRAINER_DICT[args.task](...)`` is an ``LMTrainer`` or a ``ClsTrainer``: both override
    the base's plain ``optimizer.step()`` (silent), and ``LMTrainer.compute_loss`` runs in the
    base's step loop (XLA503 on the boolean mask, read through a tuple-unpacked batch)."""
    write(tmp_path, {"pyproject.toml": "", "trainers/__init__.py": TRAINERS_INIT, "trainers/base.py": TRAINERS_BASE,
                     "trainers/tasks.py": TRAINERS_TASKS, "main.py": TRAINERS_MAIN})
    expected = {("trainers/tasks.py", 11, "XLA503")}
    assert lint_all(tmp_path) == expected
    assert lint(tmp_path, "trainers/base.py") == set()


CUDA_BACKEND = '''\
import torch


class CudaBackend:
    def step(self, optimizer):
        optimizer.step()
        torch.cuda.synchronize()
'''

XLA_BACKEND = '''\
import torch_xla.core.xla_model as xm


class XlaBackend:
    def step(self, optimizer):
        xm.optimizer_step(optimizer)
'''

BACKENDS = '''\
from cuda_backend import CudaBackend
from xla_backend import XlaBackend

BACKENDS = {"cuda": CudaBackend, "tpu": XlaBackend}
'''

BACKENDS_TRAIN = '''\
import torch
import torch_xla

from backends import BACKENDS


def run(index, args, loader):
    model = torch.nn.Linear(4, 4).to(torch_xla.device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    backend = BACKENDS[args.device]()
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        backend.step(opt)


if __name__ == "__main__":
    torch_xla.launch(run, args=(None, None))
'''


def test_device_keyed_registry_never_builds_the_cuda_item_in_an_xla_run(tmp_path):
    """``BACKENDS[args.device]`` with ``"cuda"`` and ``"tpu"`` items: an XLA run builds the
    TPU one; the CUDA backend's plain ``optimizer.step()`` is not XLA code."""
    write(tmp_path, {"pyproject.toml": "", "backends.py": BACKENDS, "train.py": BACKENDS_TRAIN,
                     "cuda_backend.py": CUDA_BACKEND, "xla_backend.py": XLA_BACKEND})
    assert lint_all(tmp_path) == set()
    # the lookup is what keeps it out: the "cuda" item, named, runs in XLA code
    clear_cache()
    write(tmp_path, {"train.py": BACKENDS_TRAIN.replace("BACKENDS[args.device]()", 'BACKENDS["cuda"]()')})
    assert lint_all(tmp_path) == {("cuda_backend.py", 7, "XLA401")}

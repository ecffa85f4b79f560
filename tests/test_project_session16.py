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


# --- what cannot be seen may sync or reduce (the attack helper's wrong findings) ----------

LOOP_HEAD = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
{imports}


def _mp_fn(index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
{setup}
    for step in range(100):
        loss = model(torch.randn(8, 4, device=device)).pow(2).mean()
        loss.backward()
{body}


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''

HOOKS = '''\
import torch_xla
import torch_xla.core.xla_model as xm


def log_hook(step, loss):
    return step


def sync_hook(step, loss):
    torch_xla.sync()


def all_reduce_grads(opt):
    xm.reduce_gradients(opt)


def get_reducer():
    return xm.reduce_gradients


def synced(fn):
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        torch_xla.sync()
        return out
    return wrapper


def synced_batches(n, device):
    import torch
    for _ in range(n):
        torch_xla.sync()
        yield torch.randn(8, 4, device=device)


def setup_eager():
    torch_xla.experimental.eager_mode(True)


def broadcast_init(model):
    xm.broadcast_master_param(model)


HOOKS = {"log": log_hook, "sync": sync_hook}
REDUCERS = {"xla": all_reduce_grads}
'''


def _train(imports="", setup="", body=""):
    indent = lambda text: "\n".join("    " + line if line else line for line in text.splitlines())  # noqa: E731
    return LOOP_HEAD.format(imports=imports, setup=indent(setup) or "    pass",
                            body="\n".join("        " + line for line in body.splitlines()))


@pytest.mark.parametrize("imports, setup, body", [
    # a hook out of a list of dict items: it may be the syncing one
    ("from hooks import HOOKS", 'after = [HOOKS["log"], HOOKS["sync"]]',
     "xm.optimizer_step(opt)\nfor h in after:\n    h(step, loss)"),
    ("from hooks import HOOKS", "", 'xm.optimizer_step(opt)\nHOOKS["sync"](step, loss)'),
    # a reducer looked up by name or returned by a helper, handed the optimizer
    ("from hooks import REDUCERS", 'reduce = REDUCERS["xla"]', "reduce(opt)\nopt.step()\ntorch_xla.sync()"),
    ("from hooks import get_reducer", "reduce = get_reducer()", "reduce(opt)\nopt.step()\ntorch_xla.sync()"),
    # eager mode switched on by another module's helper
    ("from hooks import setup_eager", "setup_eager()", "xm.optimizer_step(opt)"),
])
def test_unseen_callee_may_sync_or_reduce(tmp_path, imports, setup, body):
    write(tmp_path, {"pyproject.toml": "", "hooks.py": HOOKS, "train.py": _train(imports, setup, body)})
    assert lint_all(tmp_path) == set()


@pytest.mark.parametrize("imports, setup, body, expected", [
    ("from hooks import HOOKS", "", "xm.optimizer_step(opt)\nlog_hook(step, loss)", {("train.py", 12, "XLA302")}),
    ("", "", "opt.step()\ntorch_xla.sync()", {("train.py", 15, "XLA201")}),
])
def test_seen_callees_still_report(tmp_path, imports, setup, body, expected):
    """Controls: a helper of another module the project knows does not sync, and no reduction."""
    imports = imports.replace("HOOKS", "HOOKS, log_hook")
    write(tmp_path, {"pyproject.toml": "", "hooks.py": HOOKS, "train.py": _train(imports, setup, body)})
    assert lint_all(tmp_path) == expected


DECORATED = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from hooks import synced, synced_batches


@synced
def plain_step(model, opt, x):
    model(x).pow(2).mean().backward()
    xm.optimizer_step(opt)


def _mp_fn(index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i in range(100):
        plain_step(model, opt, torch.randn(8, 4, device=device))
    for x in synced_batches(100, device):
        model(x).pow(2).mean().backward()
        xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_decorated_step_and_syncing_generator_of_another_module(tmp_path):
    """A step wrapped by another module's decorator runs the decorator's wrapper (it syncs);
    a generator of another module that syncs between its batches cuts each step."""
    write(tmp_path, {"pyproject.toml": "", "hooks.py": HOOKS, "train.py": DECORATED})
    assert lint_all(tmp_path) == set()


SEEDED = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr

from hooks import broadcast_init


def _mp_fn(index):
    torch.manual_seed(1234 + xr.global_ordinal())
    model = torch.nn.Linear(8, 1).to(torch_xla.device())
    broadcast_init(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(20):
        model(torch.randn(4, 8).to(torch_xla.device())).sum().backward()
        xm.optimizer_step(opt)
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_parameter_broadcast_in_another_module(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "hooks.py": HOOKS, "train.py": SEEDED})
    assert lint_all(tmp_path) == set()
    clear_cache()
    write(tmp_path, {"train.py": SEEDED.replace("    broadcast_init(model)\n", "")})
    assert lint_all(tmp_path) == {("train.py", 10, "XLA205")}


OFFLOAD_TRAIN = '''\
import torch
import torch_xla
import torch_xla.runtime as xr

from offload import offload


def _mp_fn(index, out):
    model = torch.nn.Linear(4, 1).to(torch_xla.device())
    model = offload(model)
    if xr.global_ordinal() == 0:
        torch.save(model.state_dict(), out)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=("/tmp/m.pt",))
'''


def test_module_moved_by_another_modules_helper_is_unknown(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "offload.py": "def offload(model):\n    model.cpu()\n    return model\n",
                     "train.py": OFFLOAD_TRAIN})
    assert lint_all(tmp_path) == set()


BARRIER = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader, TensorDataset


def finish_step(optimizer, barrier):
    xm.optimizer_step(optimizer, barrier=barrier)


def _mp_fn(index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8, drop_last=True)
    for (x,) in loader:
        model(x.to(device)).sum().backward()
        finish_step(opt, True)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_barrier_a_caller_passes(tmp_path):
    """``xm.optimizer_step(opt, barrier=barrier)`` with the caller's ``True``: the step may cut
    (no XLA301; the loader has no sampler, XLA303)."""
    write(tmp_path, {"pyproject.toml": "", "train.py": BARRIER})
    assert lint_all(tmp_path) == {("train.py", 15, "XLA303")}


# --- a Lightning-like framework: a bound method spawned, its loop's objects stored on self ----

LIT_TRAINER = '''\
class Trainer:
    def __init__(self, strategy):
        self.strategy = strategy
        self.module = None

    def fit(self, module):
        self.strategy.launch(self._run, module)

    def _run(self, index, module):
        self.module = self.strategy.setup_module(module)
        optimizer = self.module.configure_optimizers()
        loader = self.strategy.process_dataloader(self.module.train_dataloader())
        for batch in loader:
            optimizer.zero_grad()
            loss = self.module.training_step(batch)
            loss.backward()
            self.strategy.optimizer_step(optimizer)
'''

LIT_XLA = '''\
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp


class XLAStrategy:
    def launch(self, function, *args):
        xmp.spawn(function, args=args)

    def setup_module(self, module):
        self.device = torch_xla.device()
        return module.to(self.device)

    def process_dataloader(self, loader):
        return pl.MpDeviceLoader(loader, self.device)

    def optimizer_step(self, optimizer):
        xm.optimizer_step(optimizer)
'''

LIT_MODULE = '''\
import torch


class LiteModule(torch.nn.Module):
    def log(self, name, value):
        if torch.is_tensor(value):
            value = value.item()
        print(name, value)
'''

LIT_SCRIPT = '''\
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from lit.module import LiteModule
from lit.trainer import Trainer
from lit.xla import XLAStrategy


class Net(LiteModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        ds = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
        return DataLoader(ds, batch_size=8, drop_last=True)


def main():
    Trainer(XLAStrategy()).fit(Net())


if __name__ == "__main__":
    main()
'''


def test_lightning_like_base_log_runs_per_step(tmp_path):
    """``xmp.spawn(function, args=args)`` of the bound ``Trainer._run`` runs it on its trainer;
    ``self.module = self.strategy.setup_module(module)`` is the user's module in the loop,
    whose ``training_step``'s ``self.log(...)`` runs the base's ``log`` once per step with
    the device loss (a batch of the loader the strategy's ``process_dataloader`` returns):
    XLA501 there. The train loader the user's ``train_dataloader`` hook builds reaches that
    loop through ``process_dataloader`` (the resolved call's ``DispatchFacts.feeds_via``) and
    has no sampler (XLA303)."""
    write(tmp_path, {"pyproject.toml": "", "lit/__init__.py": "", "lit/trainer.py": LIT_TRAINER,
                     "lit/xla.py": LIT_XLA, "lit/module.py": LIT_MODULE, "train.py": LIT_SCRIPT})
    expected = {("lit/module.py", 7, "XLA501"), ("train.py", 29, "XLA303")}
    assert lint_all(tmp_path) == expected
    assert lint(tmp_path, "lit/module.py") == {("lit/module.py", 7, "XLA501")}


TABLE_REGISTRY = '''\
TRAINERS = {}


def register(table, name):
    def decorator(obj):
        table[name] = obj
        return obj
    return decorator


def register_trainer(name):
    return register(TRAINERS, name)
'''

TABLE_TASKS = '''\
import torch_xla.core.xla_model as xm

from registry import register_trainer


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def optimizer_step(self):
        self.optimizer.step()

    def train_epoch(self, loader):
        for x in loader:
            self.model(x).sum().backward()
            self.optimizer_step()


@register_trainer("plain")
class PlainTrainer(BaseTrainer):
    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)
'''

TABLE_TRAIN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset

import tasks  # noqa: F401
from registry import TRAINERS


def build_loader():
    return DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8, drop_last=True)


def _mp_fn(index, name):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    trainer = TRAINERS[name](model, torch.optim.SGD(model.parameters(), lr=0.1))
    trainer.train_epoch(pl.MpDeviceLoader(build_loader(), device))


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=("plain",))
'''


def test_registrar_handed_its_table(tmp_path):
    """``register_trainer(name)`` returns ``register(TRAINERS, name)``, which stores what it
    decorates in the table it is handed: ``PlainTrainer`` is in ``TRAINERS``, so the base's
    plain ``optimizer.step()`` never runs (no XLA201), and the loader the launched code builds
    feeds the inherited ``train_epoch``'s step loop (XLA303: no sampler)."""
    write(tmp_path, {"pyproject.toml": "", "registry.py": TABLE_REGISTRY, "tasks.py": TABLE_TASKS,
                     "train.py": TABLE_TRAIN})
    assert lint_all(tmp_path) == {("train.py", 11, "XLA303")}


# --- items of a returned tuple -------------------------------------------------------------

PREPARE_ACC = '''\
import torch_xla


class Accelerator:
    def __init__(self):
        self.device = torch_xla.device()

    def prepare(self, model, optimizer_class):
        model = model.to(self.device)
        return model, optimizer_class
'''

PREPARE_FACTORY = '''\
import torch

from model import Net


def build_everything(accelerator):
    model = Net()
    model, optimizer_class = accelerator.prepare(model, torch.optim.SGD)
    return model, optimizer_class(model.parameters(), lr=0.1)
'''

PREPARE_MODEL = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 2)

    def forward(self, x, mask):
        if (mask == 0).any():
            x = x * mask
        return self.layer(x)
'''

PREPARE_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from accel import Accelerator
from factory import build_everything


def training_function(index, loader):
    accelerator = Accelerator()
    model, optimizer = build_everything(accelerator)
    for x, mask in pl.MpDeviceLoader(loader, accelerator.device):
        model(x, mask).sum().backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    torch_xla.launch(training_function, args=(None,))
'''


def test_model_an_item_of_returned_tuples(tmp_path):
    """``model, optimizer = build_everything(accelerator)``, whose ``return model, ...`` gives
    an item of ``accelerator.prepare(model, torch.optim.SGD)``, itself giving back its
    ``model`` parameter moved: ``model(x, mask)`` runs ``Net.forward`` in the step, whose test
    of the device mask syncs (XLA502)."""
    write(tmp_path, {"pyproject.toml": "", "accel.py": PREPARE_ACC, "factory.py": PREPARE_FACTORY,
                     "model.py": PREPARE_MODEL, "train.py": PREPARE_TRAIN})
    expected = {("model.py", 10, "XLA502")}
    assert lint_all(tmp_path) == expected
    assert lint(tmp_path, "model.py") == expected

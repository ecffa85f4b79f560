"""Session 17's project-mode pieces (issue 28), each with its traps.

- A folder below the project root that holds a root marker of its own (``pyproject.toml``,
  ``setup.cfg``, ``setup.py``, ``.git``: a vendored package, a submodule, a fixture project)
  is another project: the outer project's listing leaves it out, so each file belongs to
  the one project its own lint reads.
"""

from __future__ import annotations

import pytest

from flake8_xla.project.files import ProjectFiles, find_root
from test_project_mode import lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.cfg", "setup.py", ".git"])
def test_nested_project_left_out_of_the_listing(tmp_path, marker):
    write(tmp_path, {"pyproject.toml": "", "train.py": "", "pkg/__init__.py": "", "pkg/util.py": "",
                     f"vendor/lib/{marker}": "", "vendor/lib/a.py": "", "vendor/lib/deep/b.py": "",
                     "vendor/c.py": ""})
    files = ProjectFiles(tmp_path.resolve()).files()
    assert sorted(p.relative_to(tmp_path.resolve()).as_posix() for p in files) == [
        "pkg/__init__.py", "pkg/util.py", "train.py", "vendor/c.py"]
    # the nested project's own files are its own project, listed from its root
    inner = tmp_path.resolve() / "vendor/lib"
    assert find_root(inner / "deep/b.py") == inner
    assert sorted(p.relative_to(inner).as_posix() for p in ProjectFiles(inner).files()) == sorted(
        ["a.py", "deep/b.py"] + (["setup.py"] if marker == "setup.py" else []))


def test_git_folder_marks_a_nested_project(tmp_path):
    write(tmp_path, {"setup.py": "", "m.py": "", "sub/.git/HEAD": "", "sub/s.py": ""})
    files = ProjectFiles(tmp_path.resolve()).files()
    assert sorted(p.name for p in files) == ["m.py", "setup.py"]


# --- a function only named is not run: XLA003 before the launch ------------------------------

WORKERS = '''\
import functools

import torch
import torch_xla
import torch_xla.core.xla_model as xm


def _worker(lr, index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(10):
        model(torch.randn(8, 4, device=device)).sum().backward()
        xm.optimizer_step(opt)
        torch_xla.sync()


def make_worker(lr):
    return functools.partial(_worker, lr)


def pick_worker(lr):
    {body}
'''

LAUNCHER = '''\
import torch_xla

from workers import make_worker, pick_worker

if __name__ == "__main__":
    fn = {call}
    torch_xla.launch(fn)
'''


@pytest.mark.parametrize("body, call, expected", [
    # a partial of the worker: built before the launch, run in the launched processes
    ("return _worker", "make_worker(0.05)", set()),
    # the worker itself handed back (a name, not a call)
    ("return _worker", "pick_worker(0.05)", set()),
    # a helper that does touch the runtime before handing the partial back
    ("torch_xla.device()\n    return functools.partial(_worker, lr)", "pick_worker(0.05)",
     {("train.py", 6, "XLA003")}),
    # a nested def handed back: it runs where it is called (in the launched processes)
    ("def build():\n        return _worker(lr, 0)\n    return build", "pick_worker(0.05)", set()),
    # a helper that calls the worker (it runs now)
    ("_worker(lr, 0)\n    return _worker", "pick_worker(0.05)", {("train.py", 6, "XLA003")}),
])
def test_named_function_does_not_run_before_launch(tmp_path, body, call, expected):
    write(tmp_path, {"pyproject.toml": "", "workers.py": WORKERS.replace("{body}", body),
                     "train.py": LAUNCHER.replace("{call}", call)})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA003"} == expected


# --- a subclass's inherited method called in another module; super() along the object's MRO ---

MRO_BASE = '''\
import torch


class BaseLoop:
    def __init__(self, model):
        self.device = self.setup_device()
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.history = []

    def setup_device(self):
        return torch.device("cpu")

    def compute_loss(self, batch):
        raise NotImplementedError

    def after_step(self, loss):
        self.history.append(loss.item())

    def fit(self, loader):
        for batch in loader:
            loss = self.compute_loss(batch)
            loss.backward()
            self.optimizer.step()
            self.after_step(loss)
'''

MRO_MIXIN = '''\
import torch_xla
import torch_xla.core.xla_model as xm


class XlaMixin:
    def setup_device(self):
        return torch_xla.device()

    def after_step(self, loss):
        super().after_step(loss)
        torch_xla.sync()
'''

MRO_TASK = '''\
from .base import BaseLoop
from .xla_mixin import XlaMixin


class Trainer(XlaMixin, BaseLoop):
    def compute_loss(self, batch):
        x, y = batch["x"], batch["y"]
        keep = y > 0
        return (self.model(x)[keep] - y[keep]).pow(2).mean()
'''

MRO_DATA = '''\
import torch
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return {"x": torch.randn(4), "y": torch.randn(1)}


def build_loader(device):
    return pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8, drop_last=True), device)
'''

MRO_RUN = '''\
import torch
import torch_xla

from data import build_loader
from loops.task import Trainer


def main():
    trainer = Trainer(torch.nn.Linear(4, 1))
    trainer.fit(build_loader(trainer.device))


if __name__ == "__main__":
    main()
'''


def _mro_project(tmp_path, data=MRO_DATA, task=MRO_TASK):
    write(tmp_path, {"pyproject.toml": "", "loops/__init__.py": "", "loops/base.py": MRO_BASE,
                     "loops/xla_mixin.py": MRO_MIXIN, "loops/task.py": task, "data.py": data, "run.py": MRO_RUN})


def test_inherited_method_called_through_a_subclass_gets_the_callers_loader(tmp_path):
    # run.py calls trainer.fit(build_loader(...)) on a Trainer: fit is BaseLoop.fit, whose loop
    # draws from what build_loader returns (an MpDeviceLoader), so the batch the step hands
    # to Trainer.compute_loss is on the device: the mask indexing is XLA503
    _mro_project(tmp_path)
    assert lint_all(tmp_path) == {("loops/task.py", 9, "XLA503")}


def test_plain_loader_result_keeps_batches_on_the_host(tmp_path):
    _mro_project(tmp_path, data=MRO_DATA.replace(
        "return pl.MpDeviceLoader(DataLoader(Pairs(), batch_size=8, drop_last=True), device)",
        "return DataLoader(Pairs(), batch_size=8, drop_last=True)"))
    assert lint_all(tmp_path) == set()


def test_super_in_a_mixin_runs_the_next_class_of_the_objects_mro(tmp_path):
    from pathlib import Path

    from flake8_xla.project import _project, _reach_index
    from flake8_xla.settings import Settings
    _mro_project(tmp_path)
    files = _project(tmp_path.resolve())
    index = _reach_index(files, Settings())
    base = str((tmp_path / "loops/base.py").resolve())
    # XlaMixin.after_step's super().after_step() on a Trainer(XlaMixin, BaseLoop) is BaseLoop.after_step
    assert "BaseLoop.after_step" in index.get(base, {})
    assert Path(base).exists()


# --- the attack helper's wrong findings (adv17), each shape with its still-reported twin ------

EVAL_BRANCH = '''\
import torch
import torch_xla


def run_epoch(model, loader, optimizer, train):
    total = 0.0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch_xla.sync()
            {after}
        else:
            total += loss.item()
    return total


def main():
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(8, 4, device=device), torch.randn(8, 1, device=device)) for _ in range(4)]
    run_epoch(model, data, opt, True)
    run_epoch(model, data, opt, False)
'''


@pytest.mark.parametrize("after, expected", [
    ("pass", set()),  # the read is in the iterations that train nothing (evaluation)
    ("continue", set()),
])
def test_read_in_the_branch_that_does_not_train(tmp_path, after, expected):
    write(tmp_path, {"pyproject.toml": "", "one.py": EVAL_BRANCH.replace("{after}", after)})
    assert lint_all(tmp_path) == expected


def test_read_beside_a_gated_step_still_reported(tmp_path):
    # gradient accumulation: the backward runs every iteration, the step every 4th; a read in
    # the else is still a sync in a training iteration
    text = EVAL_BRANCH.replace(
        "        if train:\n            optimizer.zero_grad()\n            loss.backward()\n",
        "        loss.backward()\n        if train:\n            optimizer.zero_grad()\n")
    write(tmp_path, {"pyproject.toml": "", "one.py": text.replace("{after}", "pass")})
    assert lint_all(tmp_path) == {("one.py", 16, "XLA501")}


SYNC_SHAPES = '''\
import functools

import torch
import torch_xla
from torch.utils.data import DataLoader, TensorDataset


class StepScope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        {exit_body}


def synced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        {wrapper_sync}
        return out
    return wrapper


@synced
def train_step(model, opt, x):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()


class BaseLoop:
    def after_step(self):
        {base_sync}


class Loop(BaseLoop):
    def after_step(self):
        super().after_step()


def main():
    dev = torch_xla.device()
    model = torch.nn.Linear(8, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = TensorDataset(torch.randn(64, 8))
    for (x,) in DataLoader(ds, batch_size=8, drop_last=True):
        with StepScope():
            opt.zero_grad()
            model(x.to(dev)).sum().backward()
            opt.step()
    for (x,) in DataLoader(ds, batch_size=8, drop_last=True):
        train_step(model, opt, x.to(dev))
    loop = Loop()
    for _ in range(10):
        opt.zero_grad()
        model(torch.randn(4, 8, device=dev)).sum().backward()
        opt.step()
        loop.after_step()
'''


def test_syncs_in_exit_decorator_and_super_are_per_step_syncs(tmp_path):
    text = SYNC_SHAPES.replace("{exit_body}", "torch_xla.sync()").replace(
        "{wrapper_sync}", "torch_xla.sync()").replace("{base_sync}", "torch_xla.sync()")
    write(tmp_path, {"pyproject.toml": "", "one.py": text})
    assert lint_all(tmp_path) == set()


def test_without_those_syncs_the_loops_are_reported(tmp_path):
    text = SYNC_SHAPES.replace("{exit_body}", "return False").replace(
        "{wrapper_sync}", "pass").replace("{base_sync}", "pass")
    write(tmp_path, {"pyproject.toml": "", "one.py": text})
    assert lint_all(tmp_path) == {("one.py", 47, "XLA301"), ("one.py", 52, "XLA301"), ("one.py", 55, "XLA302")}


def test_syncs_of_another_modules_context_manager_decorator_and_base(tmp_path):
    text = SYNC_SHAPES.replace("{exit_body}", "torch_xla.sync()").replace(
        "{wrapper_sync}", "torch_xla.sync()").replace("{base_sync}", "torch_xla.sync()")
    head, _, rest = text.partition("@synced\n")
    lib = head + "class BaseLoop:\n    def after_step(self):\n        torch_xla.sync()\n"
    main = ("import torch\nimport torch_xla\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
            "from steps import BaseLoop, StepScope, synced\n\n\n@synced\n" + rest.replace(
                "class BaseLoop:\n    def after_step(self):\n        torch_xla.sync()\n\n\n", ""))
    write(tmp_path, {"pyproject.toml": "", "steps.py": lib, "train.py": main})
    assert lint_all(tmp_path) == set()


LAUNCH_WRAPPER = '''\
import torch_xla


def launch_debug(fn):
    torch_xla.launch(fn, {how})
'''

WORKER = '''\
import torch
import torch_xla

from launch import launch_debug


def worker(index):
    dev = torch_xla.device()
    model = torch.nn.Linear(8, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        opt.zero_grad()
        model(torch.randn(4, 8, device=dev)).sum().backward()
        opt.step()
        torch_xla.sync()


if __name__ == "__main__":
    launch_debug(worker)
'''


@pytest.mark.parametrize("how, expected", [
    ("debug_single_process=True", set()),  # one process: no replicas to reduce across
    ("args=()", {("train.py", 14, "XLA201")}),  # replicas: the plain step is XLA201
])
def test_single_process_launch_wrapper(tmp_path, how, expected):
    write(tmp_path, {"pyproject.toml": "", "launch.py": LAUNCH_WRAPPER.replace("{how}", how), "train.py": WORKER})
    assert lint_all(tmp_path) == expected


SCRIPT_LOOP = '''\
import torch_xla


def fit(model, loader, optimizer):
    for (x,) in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        torch_xla.sync()
'''

SCRIPT = '''\
import torch
import torch_xla
from torch.utils.data import DataLoader, TensorDataset

from loop import fit

model = torch.nn.Linear(8, 1).to(torch_xla.device())
ds = TensorDataset(torch.randn(1000, 8))
fit(model, DataLoader(ds, batch_size=10, drop_last=True), torch.optim.Adam(model.parameters()))
'''


def test_module_level_loader_of_a_script_that_launches_nothing(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "loop.py": SCRIPT_LOOP, "main.py": SCRIPT})
    assert lint_all(tmp_path) == set()


CLIP_BASE = '''\
import torch


class BaseLoop:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def clip_gradients(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def optimizer_step(self):
        self.optimizer.step()

    def fit(self, loader):
        for x, y in loader:
            self.optimizer.zero_grad()
            torch.nn.functional.mse_loss(self.model(x), y).backward()
            {order}
'''

CLIP_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from hydra.utils import instantiate

from loops import BaseLoop


class XlaLoop(BaseLoop):
    def optimizer_step(self):
        xm.optimizer_step(self.optimizer)


def _mp_fn(index, cfg):
    device = torch_xla.device()
    model = instantiate(cfg.model)  # (a config entry handed in: no wrapper of the model)
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(4)]
    XlaLoop(model, opt).fit(pl.MpDeviceLoader(data, device))


def main(cfg):
    torch_xla.launch(_mp_fn, args=(cfg,))
'''


@pytest.mark.parametrize("order, expected", [
    # the clip a helper method makes before the override's xm.optimizer_step (all-reduce after it)
    ("self.clip_gradients()\n            self.optimizer_step()", {("loops.py", 10, "XLA203")}),
    # clipped after the step: nothing to reduce first
    ("self.optimizer_step()\n            self.clip_gradients()", set()),
])
def test_clip_in_a_helper_the_step_loop_calls_before_the_step(tmp_path, order, expected):
    write(tmp_path, {"pyproject.toml": "", "loops.py": CLIP_BASE.replace("{order}", order), "train.py": CLIP_TRAIN})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA203"} == expected


HOOKS = '''\
import torch_xla


class SyncHook:
    def after_step(self, loss):
        {body}


class History:
    def __init__(self):
        self.losses = []

    def after_step(self, loss):
        self.losses.append({read})
'''

HOOKED = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader, TensorDataset

from hooks import History, SyncHook


def _mp_fn(index):
    dev = torch_xla.device()
    model = torch.nn.Linear(8, 1).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hooks = [SyncHook(), History()]
    ds = TensorDataset(torch.randn(64, 8))
    loader = DataLoader(ds, batch_size=8, drop_last=True)
    for (x,) in loader:
        opt.zero_grad()
        loss = model(x.to(dev)).sum()
        loss.backward()
        opt.step()
        for h in hooks:
            h.after_step(loss)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, debug_single_process=True)
'''


@pytest.mark.parametrize("body, read, expected", [
    # a hook of another module, in a list the step loop iterates, syncs the step: no XLA301
    ("torch_xla.sync()", "float(loss)", set()),
    # no hook syncs (and the history keeps the tensor, no read): the loop's graph grows (XLA301)
    ("pass", "loss.detach()", {("train.py", 16, "XLA301")}),
])
def test_hooks_in_a_list_of_another_modules_objects(tmp_path, body, read, expected):
    write(tmp_path, {"pyproject.toml": "", "hooks.py": HOOKS.replace("{body}", body).replace("{read}", read),
                     "train.py": HOOKED})
    assert {f for f in lint_all(tmp_path) if f[2] in ("XLA301", "XLA302")} == expected


def test_read_in_a_listed_hook_of_another_module_runs_every_step(tmp_path):
    # History.after_step is called on each element of [SyncHook(), History()] in the step,
    # before any sync of the loop's own: its float(loss) is a per-step read (XLA501)
    write(tmp_path, {"pyproject.toml": "", "hooks.py": HOOKS.replace("{body}", "pass").replace(
        "{read}", "float(loss)"), "train.py": HOOKED.replace(
        "        for h in hooks:\n            h.after_step(loss)\n",
        "        for h in hooks:\n            h.after_step(loss)\n        torch_xla.sync()\n")})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA501"} == {("hooks.py", 14, "XLA501")}


SPAWNER = '''\
import torch_xla.distributed.xla_multiprocessing as xmp


def spawn(fn, args=(), nprocs=None):
    xmp.spawn(fn, args=args, nprocs=nprocs)
'''

SPAWNED = '''\
import torch_xla

import launcher


def _mp_fn(index):
    print(torch_xla.device())


if __name__ == "__main__":
    launcher.spawn(_mp_fn{extra})
'''


@pytest.mark.parametrize("extra, expected", [
    ("", set()),  # the default None reaches xmp.spawn: no ValueError
    (", nprocs=8", {("launcher.py", 5, "XLA001")}),
])
def test_spawn_wrapper_nprocs_parameter(tmp_path, extra, expected):
    write(tmp_path, {"pyproject.toml": "", "launcher.py": SPAWNER, "train.py": SPAWNED.replace("{extra}", extra)})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA001"} == expected


ENGINE = '''\
import torch_xla


class Engine:
    def __init__(self, model):
        self.device = torch_xla.device()
        {move}
        self.optimizer = None
'''

NET = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)
'''

ENGINE_TRAIN = '''\
import torch
import torch_xla

from pkg import Engine, Net


def _mp_fn(index):
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = Engine(model{extra})
    engine.optimizer = optimizer
    return engine


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


@pytest.mark.parametrize("move, extra, expected", [
    # the constructor moves the caller's module in place (nn.Module.to): the optimizer built
    # before it keeps the host parameters (XLA405 at its constructor)
    ("self.model = model.to(self.device)", "", {("train.py", 9, "XLA405")}),
    # kept as it came: nothing moves it there
    ("self.model = model", "", set()),
    # the optimizer handed to the same call: it may be pointed at the moved parameters there
    ("self.model = model.to(self.device)", ", optimizer", set()),
])
def test_constructor_of_a_reexported_class_moves_its_module_argument(tmp_path, move, extra, expected):
    engine = ENGINE.replace("{move}", move)
    if extra:
        engine = engine.replace("def __init__(self, model):", "def __init__(self, model, optimizer=None):")
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "from .engine import Engine\nfrom .net import Net\n",
                     "pkg/engine.py": engine, "pkg/net.py": NET, "train.py": ENGINE_TRAIN.replace("{extra}", extra)})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA405"} == expected


SAVE_ON_MASTER = '''\
import torch
import torch.distributed as dist


def save_on_master(state, path):
    if dist.get_rank() == 0:
        torch.save(state, path)
'''

DDP_MAIN = '''\
import torch
import torch.distributed as dist
import torch_xla
from torch.nn.parallel import DistributedDataParallel as DDP

import dist_utils


def _mp_fn(index):
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1){move}
    model = DDP(model, gradient_as_bucket_view=True)
    model_without_ddp = model.module
    checkpoint = {"model": model_without_ddp.state_dict()}
    dist_utils.save_on_master(checkpoint, "ckpt.pth")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


@pytest.mark.parametrize("move, expected", [
    # the module a DDP wrap of a moved module holds is on the device: its state is XLA tensors
    (".to(device)", {("dist_utils.py", 7, "XLA601")}),
    ("", set()),  # never moved: host tensors
])
def test_state_of_model_without_ddp_handed_to_a_save_helper(tmp_path, move, expected):
    write(tmp_path, {"pyproject.toml": "", "dist_utils.py": SAVE_ON_MASTER, "train.py": DDP_MAIN.replace("{move}", move)})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA601"} == expected


WRAP_CLASS = '''\
import torch
from torch.nn.parallel import DistributedDataParallel


class XlaDDP({base}):
    def __init__(self, module):
        super().__init__(module{options})
'''

WRAP_TRAIN = '''\
import torch
import torch.distributed as dist
import torch_xla

from ddp import XlaDDP


def _mp_fn(index):
    dist.init_process_group("xla", init_method="xla://")
    device = torch_xla.device()
    model = XlaDDP(torch.nn.Linear(4, 1).to(device))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        opt.zero_grad()
        model(torch.randn(8, 4, device=device)).sum().backward()
        opt.step()
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


@pytest.mark.parametrize("base, options, expected", [
    # a user subclass of DDP in another module: building it wraps the model, DDP reduces
    ("DistributedDataParallel", ", gradient_as_bucket_view=True", set()),
    # a plain module subclass: nothing reduces the gradients
    ("torch.nn.Module", "", {("train.py", 16, "XLA201")}),
])
def test_ddp_subclass_of_another_module_wraps_the_model(tmp_path, base, options, expected):
    cls = WRAP_CLASS.replace("{base}", base).replace("{options}", options)
    if base == "torch.nn.Module":
        cls = cls.replace("super().__init__(module)", "super().__init__()\n        self.module = module")
    write(tmp_path, {"pyproject.toml": "", "ddp.py": cls, "train.py": WRAP_TRAIN})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA201"} == expected


FIRE_BASE = '''\
class BaseTrainer:
    def __init__(self, model, loader, optimizer, callbacks=()):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer
        self.callbacks = list(callbacks)

    def fire(self, event, *args):
        for cb in self.callbacks:
            getattr(cb, event)(*args)

    def train(self):
        for step, (x, y) in enumerate(self.loader):
            loss = self.model(x).sum()
            loss.backward()
            self.optimizer.step()
            self.fire("{event}", self, step, loss)
'''

FIRE_TPU = '''\
from .base import BaseTrainer


class TPUTrainer(BaseTrainer):
    pass
'''

FIRE_RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.nn.parallel import DistributedDataParallel as DDP

from lib.tpu import TPUTrainer


class Reader:
    def on_step_end(self, trainer, step, loss):
        print(loss.item())

    def on_epoch_end(self, trainer, step, loss):
        print(loss.item())


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = DDP(torch.nn.Linear(4, 1).to(device), gradient_as_bucket_view=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = TPUTrainer(model, pl.MpDeviceLoader(loader, device), optimizer, callbacks=[Reader()])
    trainer.train()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


@pytest.mark.parametrize("event, expected", [
    # the trainer's own fire() in its step loop names on_step_end: Reader.on_step_end runs per step
    ("on_step_end", {("run.py", 11, "XLA501")}),
    ("on_epoch_end", {("run.py", 14, "XLA501")}),
])
def test_callbacks_the_trainers_own_fire_method_runs_in_the_step(tmp_path, event, expected):
    write(tmp_path, {"pyproject.toml": "", "lib/__init__.py": "", "lib/base.py": FIRE_BASE.replace("{event}", event),
                     "lib/tpu.py": FIRE_TPU, "run.py": FIRE_RUN})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA501"} == expected


UNSYNCED_TRAINER = '''\
import torch_xla


class BaseTrainer:
    def __init__(self, model, loader, optimizer):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer

    def train(self):
        for step, (x, y) in enumerate(self.loader):
            loss = self.model(x).sum()
            loss.backward()
            self.optimizer.step()
            {sync}
'''

UNSYNCED_RUN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, TensorDataset

from trainer import BaseTrainer


def main():
    loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, drop_last=True)
    device = torch_xla.device()
    model = torch.nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = BaseTrainer(model, {loader}, optimizer)
    trainer.train()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("sync, loader, expected", [
    # a plain loader handed to another module's class whose loop never syncs: the graph grows
    ("pass", "loader", {("run.py", 14, "XLA301")}),
    ("torch_xla.sync()", "loader", set()),  # the loop syncs every step
    ("pass", "pl.MpDeviceLoader(loader, device)", set()),  # a device loader syncs per batch
])
def test_plain_loader_handed_to_another_modules_unsynced_loop(tmp_path, sync, loader, expected):
    write(tmp_path, {"pyproject.toml": "", "trainer.py": UNSYNCED_TRAINER.replace("{sync}", sync),
                     "run.py": UNSYNCED_RUN.replace("{loader}", loader)})
    assert {f for f in lint_all(tmp_path) if f[2] in ("XLA301", "XLA302")} == expected


CTOR_RECEIVER = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self):
        self.device = torch_xla.device()
        self.model = torch.nn.Linear(4, 2).to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def fit(self, loader):
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            self.optimizer.zero_grad()
            torch.nn.functional.cross_entropy(self.model(x), y).backward()
            xm.optimizer_step(self.optimizer)


def main():
    ds = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    loader = DataLoader(ds, batch_size=8, drop_last=True)
    {call}


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("call", ["Trainer().fit(loader)", "trainer = Trainer()\n    trainer.fit(loader)"])
def test_method_called_on_a_constructor_call(tmp_path, call):
    # the same findings whether the object is named or not (a new user's report)
    write(tmp_path, {"pyproject.toml": "", "one.py": CTOR_RECEIVER.replace("{call}", call)})
    line = 25 if "trainer =" in call else 24
    assert lint_all(tmp_path) == {("one.py", line, "XLA301")}


DEVICE_DATA = '''\
import torch
from torch.utils.data import DataLoader, Dataset


class Windows(Dataset):
    def __init__(self, tokens):
        self.tokens = tokens

    def __len__(self):
        return self.tokens.numel() // 8

    def __getitem__(self, i):
        return self.tokens[i * 8:(i + 1) * 8]


def build_loader(n, device):
    tokens = torch.arange(n).to(device)
    return DataLoader(Windows(tokens), batch_size=4, num_workers=4, drop_last=True)
'''

DEVICE_TRAIN = '''\
import torch_xla

from data import build_loader


def main():
    device = {device}
    loader = build_loader(1024, device)
    for batch in loader:
        print(batch.shape)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("device, expected", [
    # every caller hands the helper the XLA device: the dataset holds XLA tensors (XLA305)
    ("torch_xla.device()", {("pkg/data.py", 18, "XLA305")}),
    ('"cpu"', set()),  # a CPU device: host tensors in the workers
])
def test_device_parameter_every_caller_fills_with_the_xla_device(tmp_path, device, expected):
    # a package's __init__ re-exporting the helper (and listing it in __all__) calls nothing
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": 'from .data import build_loader\n\n__all__ = ["build_loader"]\n',
                     "pkg/data.py": DEVICE_DATA,
                     "train.py": DEVICE_TRAIN.replace("{device}", device).replace("from data import", "from pkg import")})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA305"} == expected


def test_tensor_test_of_the_training_branch_is_still_a_sync(tmp_path):
    # `if torch.isfinite(loss):` holding the backward and the step: the branch that trains is
    # the step's, and its test reads the device (XLA502), as before the evaluation-branch rule
    text = EVAL_BRANCH.replace("        if train:\n", "        if torch.isfinite(loss):\n").replace(
        "        else:\n            total += loss.item()\n", "")
    write(tmp_path, {"pyproject.toml": "", "one.py": text.replace("{after}", "pass")})
    assert lint_all(tmp_path) == {("one.py", 9, "XLA502")}

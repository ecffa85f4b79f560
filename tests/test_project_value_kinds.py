"""Project mode: what a value is, across a module edge (issue 28's value lattice): a
module wrapped by DDP (or FSDP, ``torch.compile``) around a module moved to the XLA device is
on the device too, so a checkpoint state holding its ``state_dict()`` handed to another
module's save helper is XLA state there (XLA601)."""

from __future__ import annotations

import pytest

from test_project_mode import lint_all, write

#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")

UTILS = '''\
import os

import torch


def save_checkpoint(state, out_dir):
    torch.save(state, os.path.join(out_dir, "ckpt.pt"))
'''

TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch.nn.parallel import DistributedDataParallel as DDP

from utils import save_checkpoint


def _mp_fn(index, out):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4)
    model = WRAP
    if xm.is_master_ordinal(local=False):
        save_checkpoint({"epoch": 1, "state_dict": model.state_dict()}, out)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=("out",))
'''


@pytest.mark.parametrize("wrap", ["DDP(model.to(device), gradient_as_bucket_view=True)",
                                  "DDP(module=model.to(device), gradient_as_bucket_view=True)",
                                  "torch.compile(model.to(device))"])
def test_a_wrapped_moved_module_s_state_is_xla_state(tmp_path, wrap):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "train.py": TRAIN.replace("WRAP", wrap)})
    # (train.py has its own: torch.compile without backend= is XLA403)
    assert {f for f in lint_all(tmp_path) if f[0] == "utils.py"} == {("utils.py", 7, "XLA601")}


@pytest.mark.parametrize("wrap", ["DDP(model, gradient_as_bucket_view=True)", "torch.compile(model.cpu())",
                                  "DDP(model.to(device).cpu())"])
def test_a_wrapped_module_not_visibly_on_the_device(tmp_path, wrap):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "train.py": TRAIN.replace("WRAP", wrap)})
    assert {f for f in lint_all(tmp_path) if f[0] == "utils.py"} == set()


# --- the launched function imported from another module, and config constants ---------------

CONFIG = '''\
NUM_CORES = 16
DIST_BACKEND = "xla"
'''

DATA = '''\
import torch_xla.runtime as xr
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from . import config


def build_loader(ds):
    sampler = DistributedSampler(ds, num_replicas=config.NUM_CORES, rank=xr.global_ordinal())
    return DataLoader(ds, batch_size=8, sampler=sampler, drop_last=True)
'''

ENGINE = '''\
import warnings

import torch.distributed as dist
import torch_xla.runtime as xr

from . import config
from .data import build_loader


def main_worker(index, ds):
    if xr.world_size() < config.NUM_CORES:
        warnings.warn(f"config.NUM_CORES={config.NUM_CORES} but fewer devices")
    dist.init_process_group(config.DIST_BACKEND, rank=xr.global_ordinal())
    return build_loader(ds)
'''

LAUNCH = '''\
import torch_xla.distributed.xla_multiprocessing as xmp

from pod.engine import main_worker

if __name__ == "__main__":
    xmp.spawn(main_worker, args=(None,))
'''

POD = {"pyproject.toml": "", "src/pod/__init__.py": "", "src/pod/config.py": CONFIG, "src/pod/data.py": DATA,
       "src/pod/engine.py": ENGINE, "scripts/launch.py": LAUNCH}


def test_a_launched_function_imported_from_another_module_is_launched_code(tmp_path):
    # xmp.spawn(main_worker) with main_worker imported (a src/ layout): the launched code
    # starts in engine.py and reaches data.py; config.NUM_CORES is the constant 16 although an
    # f-string's text reads "config.NUM_CORES={...}" (no attribute is assigned there)
    write(tmp_path, POD)
    assert lint_all(tmp_path) == {("src/pod/data.py", 9, "XLA109"), ("src/pod/engine.py", 13, "XLA104")}


def test_an_imported_function_only_called_not_launched(tmp_path):
    # a plain script calls it: nothing is launched (both rules judge launched code only)
    launch = LAUNCH.replace("import torch_xla.distributed.xla_multiprocessing as xmp\n\n", "").replace(
        "    xmp.spawn(main_worker, args=(None,))\n", "    main_worker(0, None)\n")
    write(tmp_path, {**POD, "scripts/launch.py": launch})
    assert lint_all(tmp_path) == set()


def test_a_config_constant_assigned_elsewhere_is_no_constant(tmp_path):
    launch = LAUNCH.replace("if __name__", "from pod import config\n\nconfig.NUM_CORES = 1\n\nif __name__")
    write(tmp_path, {**POD, "scripts/launch.py": launch})
    assert lint_all(tmp_path) == {("src/pod/engine.py", 13, "XLA104")}


# --- a module a project helper returns wrapped (XLA108 / XLA202 at the caller) ---------------

WRAPPERS_MODULE = '''\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP


def shard_model(model, device):
    return FSDP(model.to(device), compute_dtype=torch.bfloat16)


def ddp_model(model, device):
    wrapped = DDP(model.to(device), gradient_as_bucket_view=True)
    return wrapped


def maybe_shard(model, device, shard):
    if shard:
        return FSDP(model.to(device))
    return model.to(device)
'''

STEPPER = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm

from wrappers import HELPER


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = HELPER(torch.nn.Linear(4, 4), device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        model(x).sum().backward()
        xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


@pytest.mark.parametrize("helper, expected", [
    ("shard_model", {("train.py", 14, "XLA202")}),
    ("ddp_model", {("train.py", 14, "XLA108")}),
    ("maybe_shard", set()),  # one return is not wrapped: which one runs is not seen
], ids=["fsdp", "ddp", "mixed-returns"])
def test_a_module_a_helper_returns_wrapped(tmp_path, helper, expected):
    write(tmp_path, {"pyproject.toml": "", "wrappers.py": WRAPPERS_MODULE,
                     "train.py": STEPPER.replace("HELPER", helper)})
    assert lint_all(tmp_path) == expected


def test_the_returned_wrap_in_the_summary(tmp_path):
    from flake8_xla.project import _project, summary_of
    from flake8_xla.settings import Settings

    write(tmp_path, {"pyproject.toml": "", "wrappers.py": WRAPPERS_MODULE})
    s = summary_of((tmp_path / "wrappers.py").resolve(), _project(tmp_path.resolve()), Settings())
    assert [(f.qual, f.returns_wrap) for f in s.functions] == [
        ("shard_model", "fsdp"), ("ddp_model", "ddp"), ("maybe_shard", "")]



@pytest.mark.parametrize("store", ['setattr(config, "NUM_CORES", xr.world_size())',
                                   'vars(config)["NUM_CORES"] = xr.world_size()',
                                   'config.__dict__.update(NUM_CORES=xr.world_size())'],
                         ids=["setattr", "vars-item", "dict-update"])
def test_a_constant_stored_dynamically_is_no_constant(tmp_path, store):
    engine = ENGINE.replace("def main_worker(index, ds):\n", f"def main_worker(index, ds):\n    {store}\n")
    write(tmp_path, {**POD, "src/pod/engine.py": engine})
    assert {f for f in lint_all(tmp_path) if f[0] == "src/pod/data.py"} == set()


def test_a_config_module_updating_its_own_globals_has_no_constants(tmp_path):
    write(tmp_path, {**POD, "src/pod/config.py": CONFIG + "globals().update(NUM_CORES=8)\n"})
    assert lint_all(tmp_path) == set()  # (DIST_BACKEND too is unknown now)


def test_a_partial_of_an_imported_function_launched(tmp_path):
    launch = LAUNCH.replace("import torch_xla.distributed.xla_multiprocessing as xmp\n",
                            "import functools\n\nimport torch_xla.distributed.xla_multiprocessing as xmp\n").replace(
        "xmp.spawn(main_worker, args=(None,))", "xmp.spawn(functools.partial(main_worker, ds=None))")
    write(tmp_path, {**POD, "scripts/launch.py": launch})
    assert lint_all(tmp_path) == {("src/pod/data.py", 9, "XLA109"), ("src/pod/engine.py", 13, "XLA104")}

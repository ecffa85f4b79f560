"""Values that cross a module boundary in project mode: what callers in other project
modules pass into a function's parameters (modules built on the host, module classes of
other project modules), and the same questions inside one module."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from flake8_xla.project.defs import module_class, returns_param
from flake8_xla.project.files import ProjectFiles
from flake8_xla.settings import Settings
from test_project_mode import lint, write


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


SHARDING = """\
import torch_xla.distributed.spmd as xs


def shard_model(model, mesh):
    xs.mark_sharding(model.fc.weight, mesh, ("model", None))
    for block in model.blocks:
        xs.mark_sharding(block.weight, mesh, (None, "model"))
"""

MODEL = """\
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
"""


def train(body: str, imports: str = "from model import Net\n") -> str:
    return ("import torch_xla\nimport torch_xla.runtime as xr\nfrom sharding import shard_model\n" + imports
            + "\n\ndef main(mesh):\n" + textwrap.indent(textwrap.dedent(body), "    "))


def project_with(tmp_path: Path, body: str, **extra: str) -> Path:
    files = {"pyproject.toml": "", "sharding.py": SHARDING, "model.py": MODEL, "train.py": train(body)}
    files.update(extra)
    write(tmp_path, files)
    return tmp_path


#: both mark_sharding calls of shard_model, when every caller hands it a module on the CPU
CPU_MARKS = {("sharding.py", 5, "XLA905"), ("sharding.py", 7, "XLA905")}


def test_cpu_module_passed_from_another_module_is_a_cpu_parameter(tmp_path):
    base = project_with(tmp_path, """\
        model = Net()
        shard_model(model, mesh)
        model.to(torch_xla.device())
    """)
    assert lint(base, "sharding.py") == CPU_MARKS
    assert lint(base, "train.py") == set()


def test_keyword_argument_counts_too(tmp_path):
    base = project_with(tmp_path, """\
        model = Net()
        shard_model(mesh=mesh, model=model)
        model.to(torch_xla.device())
    """)
    assert lint(base, "sharding.py") == CPU_MARKS


@pytest.mark.parametrize("body", [
    # moved before the call
    "model = Net().to(torch_xla.device())\nshard_model(model, mesh)\n",
    "model = Net()\nmodel.to(torch_xla.device())\nshard_model(model, mesh)\n",
    # handed to another call first (it may move it)
    "model = Net()\nprepare(model)\nshard_model(model, mesh)\n",
    # one of two callers passes a moved module
    "model = Net()\nshard_model(model, mesh)\nother = Net().to(torch_xla.device())\nshard_model(other, mesh)\n",
    # the module comes from somewhere unseen
    "model = load()\nshard_model(model, mesh)\n",
    # a splat may pass anything
    "args = (Net(), mesh)\nshard_model(*args)\n",
    # handed on as a value: its callers are unseen
    "model = Net()\nshard_model(model, mesh)\nhooks = [shard_model]\n",
])
def test_silent_when_some_caller_may_pass_a_moved_module(tmp_path, body):
    base = project_with(tmp_path, body)
    assert lint(base, "sharding.py") == set()


def test_a_class_that_is_no_module_is_no_cpu_module(tmp_path):
    base = project_with(tmp_path, "model = Net()\nshard_model(model, mesh)\n",
                        **{"model.py": "class Net:\n    pass\n"})
    assert lint(base, "sharding.py") == set()


def test_module_class_through_a_base_of_a_third_module(tmp_path):
    base = project_with(tmp_path, "model = Net()\nshard_model(model, mesh)\n", **{
        "base.py": "import torch.nn as nn\n\n\nclass Base(nn.Module):\n    pass\n",
        "model.py": "from base import Base\n\n\nclass Net(Base):\n    pass\n",
    })
    assert lint(base, "sharding.py") == CPU_MARKS


def test_project_mode_off_keeps_the_parameter_unknown(tmp_path):
    base = project_with(tmp_path, "model = Net()\nshard_model(model, mesh)\n")
    assert lint(base, "sharding.py", Settings(project="off")) == set()


def test_the_shard_function_moves_it_first(tmp_path):
    sharding = SHARDING.replace('    xs.mark_sharding(model.fc.weight', '    model.to("xla")\n    xs.mark_sharding(model.fc.weight')
    base = project_with(tmp_path, "model = Net()\nshard_model(model, mesh)\n", **{"sharding.py": sharding})
    assert lint(base, "sharding.py") == set()


def test_same_module_callers_count_in_single_file_mode(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "one.py": SHARDING.replace("import torch_xla.distributed.spmd as xs\n",
                                                                      "import torch\nimport torch_xla.distributed.spmd as xs\n")
                     + "\n\ndef main(mesh):\n    net = torch.nn.Linear(4, 4)\n    shard_model(net, mesh)\n"})
    assert lint(tmp_path, "one.py", Settings(project="off")) == {("one.py", 6, "XLA905"), ("one.py", 8, "XLA905")}


def test_module_class_index(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "from .nets import Net as Exported\n",
        "pkg/nets.py": "import torch\n\n\nclass Base(torch.nn.Module):\n    pass\n\n\nclass Net(Base):\n    pass\n\n\n"
                       "class Plain:\n    pass\n\n\nclass Cycle(Cycle2):\n    pass\n\n\nclass Cycle2(Cycle):\n    pass\n",
        "broken.py": "class Net(:\n",
    })
    files = ProjectFiles(tmp_path.resolve())
    nets = str((tmp_path / "pkg/nets.py").resolve())
    init = str((tmp_path / "pkg/__init__.py").resolve())
    assert module_class((nets, "Net"), files) is True
    assert module_class((nets, "Base"), files) is True
    assert module_class((init, "Exported"), files) is True
    assert module_class((nets, "Plain"), files) is False
    assert module_class((nets, "Cycle"), files) is False
    assert module_class((str((tmp_path / "broken.py").resolve()), "Net"), files) is False
    assert module_class((nets, "Missing"), files) is False


# --- a loader returned by a function of another module, trained on by its caller -----------

DATA = """\
from torch.utils.data import DataLoader


def make_loader(ds, batch_size):
    return DataLoader(ds, batch_size=batch_size, shuffle=True)
"""

TRAIN_LOADER = """\
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from data import make_loader


def _mp(index, model, opt, ds):
    device = torch_xla.device()
    loader = make_loader(ds, 32)
    for x, y in pl.MpDeviceLoader(loader, device):
        opt.zero_grad()
        model(x).sum().backward()
        xm.optimizer_step(opt)


if __name__ == "__main__":
    torch_xla.launch(_mp)
"""

EVAL_ONLY = """\
import torch
from data import make_loader


def evaluate(model, ds):
    with torch.no_grad():
        for x, y in make_loader(ds, 64):
            model(x)
"""


def test_returned_loader_trained_in_another_module(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "data.py": DATA, "train.py": TRAIN_LOADER, "cpu_eval.py": EVAL_ONLY})
    assert lint(tmp_path, "data.py") == {("data.py", 5, "XLA304")}


@pytest.mark.parametrize("data, train", [
    (DATA.replace("shuffle=True", "shuffle=True, drop_last=True"), TRAIN_LOADER),
    # the caller only evaluates with it; the step loop trains on another loader
    (DATA, TRAIN_LOADER.replace("    loader = make_loader(ds, 32)\n", "    loader = make_loader(ds, 32)\n"
                                "    for x, y in loader:\n        model(x)\n    loader = other\n")),
    # the caller hands the loader on to a function nobody can see into
    (DATA, TRAIN_LOADER.replace("pl.MpDeviceLoader(loader, device)", "pl.MpDeviceLoader(wrap(loader), device)")),
])
def test_returned_loader_silent(tmp_path, data, train):
    write(tmp_path, {"pyproject.toml": "", "data.py": data, "train.py": train})
    assert lint(tmp_path, "data.py") == set()


def test_returned_loader_needs_project_mode(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "data.py": DATA, "train.py": TRAIN_LOADER})
    assert lint(tmp_path, "data.py", Settings(project="off")) == set()


# --- forward of a module class of another module, called with device tensors ---------------

NET = """\
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, targets=None):
        h = self.fc(x)
        if targets is None:
            return h
        if torch.isnan(x).any():
            x = torch.nan_to_num(x)
        keep = targets != -100
        return F.cross_entropy(h[keep], targets[keep])
"""

LAUNCH_NET = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from helpers import prep
from model import Net


def _mp(index, loader):
    device = torch_xla.device()
    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        x = prep(x.to(device), 4)
        loss = model(x, y.to(device))
        loss.backward()
        xm.optimizer_step(opt)
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(_mp, args=(None,))
"""

HELPERS = "def prep(t, n):\n    if n:\n        return t\n    return t\n"

#: the device branch, and both boolean masks of Net.forward
FORWARD_MARKS = {("model.py", 15, "XLA502"), ("model.py", 18, "XLA503")}


def test_forward_of_another_module_runs_on_device_tensors(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "model.py": NET, "train.py": LAUNCH_NET, "helpers.py": HELPERS})
    assert lint(tmp_path, "model.py") == FORWARD_MARKS
    assert lint(tmp_path, "model.py", Settings(project="off")) == set()


@pytest.mark.parametrize("helpers", [
    "def prep(t, n):\n    return t.cpu()\n",  # hands back another value
    "def prep(t, n):\n    t = t.cpu()\n    return t\n",  # rebinds its parameter
    "def prep(t, n):\n    yield t\n",  # a generator
    "def prep(t, n):\n    if n:\n        return n\n    return t\n",  # returns one of two parameters
])
def test_forward_x_unknown_when_the_helper_returns_something_else(tmp_path, helpers):
    write(tmp_path, {"pyproject.toml": "", "model.py": NET, "train.py": LAUNCH_NET, "helpers.py": helpers})
    assert lint(tmp_path, "model.py") == {("model.py", 18, "XLA503")}  # targets is still y.to(device)


def test_forward_silent_when_called_with_host_tensors(tmp_path):
    train = LAUNCH_NET.replace("x = prep(x.to(device), 4)", "x = prep(x, 4)").replace("y.to(device)", "y")
    write(tmp_path, {"pyproject.toml": "", "model.py": NET, "train.py": train, "helpers.py": HELPERS})
    assert lint(tmp_path, "model.py") == set()


def test_returns_param_index(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "h.py": (
        "def same(a, b):\n    return b\n\n\n"
        "def nested(a):\n    def inner(z):\n        return z\n    return a\n\n\n"
        "def other(a):\n    return a + 1\n\n\n"
        "def rebound(a):\n    for a in range(3):\n        pass\n    return a\n\n\n"
        "def walrus(a):\n    if (a := 2):\n        return a\n    return a\n\n\n"
        "def none(a):\n    return\n")})
    files = ProjectFiles(tmp_path.resolve())
    h = str((tmp_path / "h.py").resolve())
    assert [returns_param((h, n), files) for n in ("same", "nested", "other", "rebound", "walrus", "none", "missing")] \
        == [1, 0, -1, -1, -1, -1, -1]


# --- a torch_xla script that launches nothing (single device, SPMD) reaches what it calls ---

SCRIPT = """\
import torch_xla
import torch_xla.runtime as xr
from utils import cleanup


def main():
    xr.use_spmd()
    cleanup()


if __name__ == "__main__":
    main()
"""

CLEANUP = "import torch\n\n\ndef cleanup():\n    torch.cuda.empty_cache()\n\n\ndef unused():\n    torch.cuda.empty_cache()\n"


def test_script_module_level_reaches_other_modules(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "train.py": SCRIPT, "utils.py": CLEANUP})
    assert lint(tmp_path, "utils.py") == {("utils.py", 5, "XLA401")}


@pytest.mark.parametrize("script", [
    SCRIPT.replace('if __name__ == "__main__":\n    main()\n', ""),  # a library: nothing runs at module level
    SCRIPT.replace("import torch_xla\nimport torch_xla.runtime as xr\n", "import torch\n").replace(
        "    xr.use_spmd()\n", ""),  # no torch_xla: a CUDA script
])
def test_script_silent(tmp_path, script):
    write(tmp_path, {"pyproject.toml": "", "train.py": script, "utils.py": CLEANUP})
    assert lint(tmp_path, "utils.py") == set()


@pytest.mark.parametrize("spelling", ["from .model import Net", "from . import model as M"])
def test_forward_of_a_class_imported_relatively(tmp_path, spelling):
    train = (LAUNCH_NET.replace("from helpers import prep\nfrom model import Net\n", spelling + "\n")
             .replace("x = prep(x.to(device), 4)", "x = x.to(device)"))
    if spelling.endswith("as M"):
        train = train.replace("Net().to(device)", "M.Net().to(device)")
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/model.py": NET, "pkg/train.py": train})
    assert lint(tmp_path, "pkg/model.py") == {("pkg/model.py", 15, "XLA502"), ("pkg/model.py", 18, "XLA503")}

"""A training step written as a helper of another project module (issue 18; a new-user trial
found it missed): ``loss = train_step(model, opt, x, y)`` in the launched loop of
``train.py``, with ``train_step`` in ``utils.py`` running the backward and the update once
per call, and the loader from ``utils.make_loader``. The helper is step code (XLA201 on its
unreduced ``optimizer.step()``, XLA501 on its ``loss.item()``), the loop calling it is a
training step loop over a plain DataLoader another module returns (XLA301). Traps: a helper
with its own loop called once per epoch (its epoch-end read is no per-step read), and a
helper that reduces (``xm.optimizer_step``)."""

from __future__ import annotations

import pytest

from test_project_mode import lint, lint_all, write


#: each test starts and ends with an empty project cache (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("fresh_project_cache")


UTILS = '''\
import os

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_loader(batch_size):
    data = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data, num_replicas=8, rank=int(os.environ["RANK"]))
    return DataLoader(data, batch_size=batch_size, sampler=sampler)


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def train_one_epoch(model, optimizer, loader):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.detach()
    return total.item()
'''

TRAIN = '''\
import torch
import torch.nn as nn
import torch_xla
import torch_xla.distributed.xla_multiprocessing as xmp

from utils import make_loader, train_one_epoch, train_step


def _mp_fn(index):
    device = torch_xla.device()
    model = nn.Linear(32, 10).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = make_loader(batch_size=32)
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        loss = train_step(model, optimizer, x, y)
        if step % 10 == 0:
            print(f"step {step} loss {loss:.3f}")
    for epoch in range(3):
        mean = train_one_epoch(model, optimizer, loader)
        print(epoch, mean)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
'''


def test_a_step_helper_of_another_module_is_step_code(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "utils.py": UTILS, "train.py": TRAIN})
    step_codes = ("XLA201", "XLA301", "XLA501", "XLA507")
    expected = {("train.py", 14, "XLA301"), ("utils.py", 19, "XLA201"), ("utils.py", 20, "XLA501"),
                ("utils.py", 29, "XLA201")}
    assert {f for f in lint_all(tmp_path) if f[2] in step_codes} == expected
    assert {f for f in lint(tmp_path, "utils.py") if f[2] in step_codes} == {
        f for f in expected if f[0] == "utils.py"}
    assert {f for f in lint(tmp_path, "train.py") if f[2] in step_codes} == {("train.py", 14, "XLA301")}


def test_a_step_helper_that_reduces_is_not_reported(tmp_path):
    utils = UTILS.replace("import os\n", "import os\n\nimport torch_xla.core.xla_model as xm\n", 1) \
        .replace("    loss.backward()\n    optimizer.step()\n    return loss.item()",
                 "    loss.backward()\n    xm.optimizer_step(optimizer)\n    return loss.detach()")
    write(tmp_path, {"pyproject.toml": "", "utils.py": utils, "train.py": TRAIN})
    found = {f for f in lint_all(tmp_path) if f[2] in ("XLA201", "XLA501")}
    assert found == {("utils.py", 31, "XLA201")}  # only the epoch helper's own loop


def test_a_step_helper_in_a_module_that_imports_torch_xla_is_step_code_too(tmp_path):
    utils = UTILS.replace("import os\n", "import os\n\nimport torch_xla.core.xla_model as xm\n", 1) \
        .replace("    optimizer.step()\n    return loss.item()",
                 "    xm.optimizer_step(optimizer)\n    return loss.item()")
    write(tmp_path, {"pyproject.toml": "", "utils.py": utils, "train.py": TRAIN})
    found = {f for f in lint_all(tmp_path) if f[2] in ("XLA201", "XLA301", "XLA501")}
    assert found == {("train.py", 14, "XLA301"), ("utils.py", 22, "XLA501"), ("utils.py", 31, "XLA201")}


PKG_TRAIN = '''\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

{imports}


def _mp_fn(index):
    device = torch_xla.device()
    model = torch.nn.Linear(32, 10).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in {loader}:
        loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        xm.optimizer_step(optimizer)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())
'''

LOADERS = ("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
           "def make_loader(batch_size):\n    data = TensorDataset(torch.randn(64, 32), torch.randint(0, 10, (64,)))\n"
           "    return DataLoader(data, batch_size=batch_size, drop_last=True)\n")
DEVICE_LOADERS = ("import torch\nimport torch_xla\nimport torch_xla.distributed.parallel_loader as pl\n"
                  "from torch.utils.data import DataLoader, TensorDataset\n\n\n"
                  "def make_loader(batch_size):\n    data = TensorDataset(torch.randn(64, 32), torch.randint(0, 10, (64,)))\n"
                  "    return pl.MpDeviceLoader(DataLoader(data, batch_size=batch_size), torch_xla.device())\n")


@pytest.mark.parametrize("imports,loader", [
    ("from .utils import make_loader", "make_loader(32)"),
    ("from . import utils", "utils.make_loader(32)"),
    ("from pkg.utils import make_loader", "make_loader(32)"),
])
def test_a_loader_a_project_function_returns_through_any_import(tmp_path, imports, loader):
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/utils.py": LOADERS,
                     "pkg/train.py": PKG_TRAIN.format(imports=imports, loader=loader)})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA301"} == {("pkg/train.py", 13, "XLA301")}


def test_a_name_two_imports_bind_is_unknown(tmp_path):
    # Python runs the later import's make_loader (a device loader): which one runs is not guessed
    imports = "from .utils import make_loader\nfrom .xla_data import make_loader  # noqa: F811"
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/utils.py": LOADERS,
                     "pkg/xla_data.py": DEVICE_LOADERS,
                     "pkg/train.py": PKG_TRAIN.format(imports=imports, loader="make_loader(32)")})
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA301"} == set()


MODEL = '''\
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 2)

    def forward(self, batch, labels=None):
        ids = batch["input_ids"]
        if ids.dim() != 2:
            raise ValueError("expected [B, T] ids")
        logits = self.head(ids.float())
        if labels is None:
            return {"logits": logits}
        loss = F.cross_entropy(logits, labels)
        if (labels < 0).any():
            loss = loss * 0.0
        return {"logits": logits, "loss": loss}


def build_model():
    return Classifier()
'''

ENGINE = '''\
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


class Engine:
    def __init__(self, model, device):
        self.device = device
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_epoch(self, loader):
        self.model.train()
        for batch in pl.MpDeviceLoader(loader, self.device):
            labels = batch.pop("labels")
            out = self.model(batch, labels=labels)
            self.optimizer.zero_grad()
            out["loss"].backward()
            xm.optimizer_step(self.optimizer)
'''

MAIN = '''\
import torch_xla
from engine import Engine
from model import build_model


def _mp_fn(index, loader):
    device = torch_xla.device()
    model = build_model().to(device)
    Engine(model, device).train_epoch(loader)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None,))
'''


def test_a_model_an_engine_keeps_and_calls_on_device_batches_runs_forward_on_device_tensors(tmp_path):
    # Engine.__init__ keeps the model it is handed (self.model = model); self.model(batch, labels=labels)
    # on device-loader batches runs Classifier.forward with device tensors: its tensor test is XLA502
    write(tmp_path, {"pyproject.toml": "", "model.py": MODEL, "engine.py": ENGINE, "main.py": MAIN})
    expected = {("model.py", 18, "XLA502")}
    assert {f for f in lint_all(tmp_path) if f[2] == "XLA502"} == expected
    assert {f for f in lint(tmp_path, "model.py") if f[2] == "XLA502"} == expected

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
    write(tmp_path, {"smoke.py": "import torch_xla\nfrom engine import worker\n\n\n"
                                 "def smoke(cfg, backend):\n    worker(0, backend, cfg)\n"})
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == set()


def test_a_cpu_script_calling_the_worker_does_not_change_the_xla_run(tmp_path):
    project(tmp_path, PLAIN)
    # a smoke script that never names torch_xla runs the worker on the CPU; in the XLA
    # processes the backend is still the launch wrapper's TPUBackend
    write(tmp_path, {"smoke.py": "from accel.base import Backend\nfrom engine import worker\n\n\n"
                                 "def smoke(cfg):\n    worker(0, Backend(), cfg)\n"})
    assert {f for f in lint_all(tmp_path) if f[0] == "engine.py"} == {("engine.py", 11, "XLA301"),
                                                                       ("engine.py", 18, "XLA507")}

"""What an XLA run knows of its own probes, and DDP wraps by another module's helper (issue 28,
session 14; blind set z: timm's device environments, a DCGAN port).

The reach follows an XLA run: there ``torch.cuda.is_available()`` fails (a TPU VM has no
CUDA) and a probe of an importable torch_xla holds (``is_xla_available()``: a ``try: import
torch_xla`` returning ``False`` on the ``ImportError``, or a library's ``is_torch_xla_available``).
A factory that picks the device environment by those probes builds only the XLA one in the
launched replica, so the CUDA environment's module is no XLA code.
"""

from __future__ import annotations

import pytest

from flake8_xla import project
from test_project_mode import lint, lint_all, write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")

FACTORY = '''\
import torch

from .base import DeviceEnv


def is_xla_available():
    try:
        import torch_xla  # noqa: F401
    except ImportError:
        return False
    return True


def initialize_device(force_cpu=False):
    if force_cpu:
        return DeviceEnv()
    elif is_xla_available():
        from .xla import DeviceEnvXla
        return DeviceEnvXla()
    elif torch.cuda.is_available():
        from .cuda import DeviceEnvCuda
        return DeviceEnvCuda()
    return DeviceEnv()
'''

BASE = '''\
import torch


class DeviceEnv:
    def __init__(self):
        self.device = torch.device("cpu")

    def step(self, optimizer):
        optimizer.step()
'''

XLA = '''\
import torch_xla
import torch_xla.core.xla_model as xm

from .base import DeviceEnv


class DeviceEnvXla(DeviceEnv):
    def __init__(self):
        self.device = torch_xla.device()

    def step(self, optimizer):
        xm.optimizer_step(optimizer)
'''

CUDA = '''\
import os

import torch
import torch.distributed as dist

from .base import DeviceEnv


class DeviceEnvCuda(DeviceEnv):
    def __init__(self):
        self.world_size = int(os.environ.get("WORLD_SIZE", 8))
        dist.init_process_group("nccl")
        self.device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(self.device)
'''

TRAIN = '''\
import torch

from envs.factory import initialize_device


def train(index):
    env = initialize_device()
    model = torch.nn.Linear(4, 2).to(env.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in [torch.zeros(2, 4)]:
        model(x.to(env.device)).sum().backward()
        env.step(optimizer)
'''

LAUNCH = '''\
import torch_xla

from train import train

if __name__ == "__main__":
    torch_xla.launch(train)
'''


def _project(tmp_path, factory=FACTORY):
    write(tmp_path, {"pyproject.toml": "", "envs/__init__.py": "", "envs/factory.py": factory,
                     "envs/base.py": BASE, "envs/xla.py": XLA, "envs/cuda.py": CUDA,
                     "train.py": TRAIN, "launch_xla.py": LAUNCH})


def test_the_cuda_branch_of_a_probing_factory_is_not_xla_code(tmp_path):
    _project(tmp_path)
    assert lint_all(tmp_path) == set()
    project.clear_cache()
    assert lint(tmp_path, "envs/cuda.py") == set()


def test_a_cuda_test_first_builds_the_xla_environment_in_the_replica(tmp_path):
    factory = FACTORY.replace('''    elif is_xla_available():
        from .xla import DeviceEnvXla
        return DeviceEnvXla()
    elif torch.cuda.is_available():
        from .cuda import DeviceEnvCuda
        return DeviceEnvCuda()''', '''    elif not torch.cuda.is_available():
        from .xla import DeviceEnvXla
        return DeviceEnvXla()
    else:
        from .cuda import DeviceEnvCuda
        return DeviceEnvCuda()''')
    _project(tmp_path, factory)
    assert lint_all(tmp_path) == set()


def test_without_a_probe_both_branches_may_run(tmp_path):
    # a test of a flag the run does not know: the CUDA environment may be built there too
    factory = FACTORY.replace("elif is_xla_available():", "elif force_cpu is False:") \
        .replace("elif torch.cuda.is_available():", "elif force_cpu is None:")
    _project(tmp_path, factory)
    found = lint_all(tmp_path)
    assert {f for f in found if f[0] == "envs/cuda.py"} and ("envs/cuda.py", 11, "XLA109") in found


DIST = '''\
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap_ddp(model):
    return DDP(model, gradient_as_bucket_view=True)
'''

GAN = '''\
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl

from dist import wrap_ddp


class GANTrainer:
    def __init__(self, netG, netD):
        self.device = torch_xla.device()
        self.netG = wrap_ddp(netG.to(self.device))
        self.netD = wrap_ddp(netD.to(self.device))
        self.opt_g = torch.optim.Adam(self.netG.parameters())
        self.opt_d = torch.optim.Adam(self.netD.parameters())

    def fit(self, loader):
        for real in pl.MpDeviceLoader(loader, self.device):
            self.opt_d.zero_grad()
            self.netD(real).mean().backward()
            self.opt_d.step()
            self.opt_g.zero_grad()
            self.netD(self.netG(real)).mean().backward()
            self.opt_g.step()


def _mp_fn(index, netG, netD, loader):
    GANTrainer(netG, netD).fit(loader)


if __name__ == "__main__":
    torch_xla.launch(_mp_fn, args=(None, None, None))
'''


def test_models_wrapped_by_another_modules_ddp_helper_step_plainly(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "dist.py": DIST, "gan.py": GAN})
    assert lint_all(tmp_path) == set()
    # the same trainer without the wrap: both plain steps are XLA201
    write(tmp_path, {"gan.py": GAN.replace("wrap_ddp(netG.to(self.device))", "netG.to(self.device)")
                     .replace("wrap_ddp(netD.to(self.device))", "netD.to(self.device)")})
    project.clear_cache()
    assert lint(tmp_path, "gan.py") == {("gan.py", 20, "XLA201"), ("gan.py", 23, "XLA201")}

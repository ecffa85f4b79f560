"""Correct code session 15's attack reported (helper branch fp15): each a trap that must stay
silent, with the shape that must still be reported beside it. Real flake8 on a small project.

- XLA003: ``device="xla"`` handed to something that only holds the string (a dataclass or
  plain config class, ``SimpleNamespace``, ``dict``, ``argparse.Namespace``,
  ``parser.set_defaults``, ``functools.partial``) starts no runtime before the launch; a
  torch factory, a tensor method or a module helper whose ``device`` parameter places a
  tensor still does.
- XLA401 and the other XLA-code rules: a test that a variable only torch_xla's runtime or a
  TPU host sets is set (``"PJRT_DEVICE" in os.environ``, ``os.getenv("COLAB_TPU_ADDR")``,
  ``os.environ.get("PJRT_DEVICE") is not None``, an early ``return`` under
  ``os.getenv("TPU_NAME")``) and ``if xm:`` of a try-import with a ``None`` fallback pick the
  XLA side: the other side is CUDA code. A default that is always set
  (``os.getenv("PJRT_DEVICE", "TPU")``), another variable, or CUDA code on the XLA side is
  still reported.
- XLA601: a copy already on the CPU stays there through calls that keep the device
  (``model.cpu().half()``, ``.to("cpu").to(dtype=...).eval()``), and a recursive ``to_cpu(obj)``
  helper's ``return obj`` is its fallback for what is no tensor; a copy on the device
  (``model.bfloat16()``, ``model.cpu().to(device)``) or a helper that moves nothing is still
  reported.
- XLA701 / XLA702: ``enabled=`` holding a CUDA test through a local name, a ``self.``
  attribute or a parameter (its default, what the module's calls pass) is off on XLA; a
  parameter some call sets to ``True``, or whose callers' value is not seen, is still reported.
"""

from __future__ import annotations

import pytest

from flake8_runner import flake8
from test_project_mode import write

pytestmark = pytest.mark.usefixtures("fresh_project_cache")


def run(tmp_path, files: dict[str, str]) -> set:
    """``{(file, line, code)}`` of real flake8's findings over the project's files."""
    write(tmp_path, {"pyproject.toml": "", **files})
    names = sorted(n for n in files if n.endswith(".py"))
    found = flake8(names, cwd=tmp_path)
    return {(p.relative_to(tmp_path.resolve()).as_posix(), line, code)
            for p, rows in found.items() for line, _col, code in rows}


# --- 1. XLA003: a device string held, not used -----------------------------------------------

CONFIGS = '''\
from dataclasses import dataclass


@dataclass
class RunConfig:
    device: str = "cpu"
    lr: float = 0.1


class Settings:
    def __init__(self, device="cpu", lr=0.1):
        self.device = device
        self.lr = lr
'''

HOLDERS = '''\
import argparse
import functools
import types
import torch_xla
from configs import RunConfig, Settings


class LocalConfig:
    def __init__(self, device="cpu"):
        self.device = device


def worker(index, device="cpu", *extra):
    print(torch_xla.device(), device, extra)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.set_defaults(device="xla")
    one = RunConfig(device="xla")
    two = Settings(device="xla")
    three = types.SimpleNamespace(device="xla")
    four = dict(device="xla", lr=0.1)
    five = argparse.Namespace(device="xla")
    six = LocalConfig(device="xla")
    fn = functools.partial(worker, device="xla")
    torch_xla.launch(fn, args=(one, two, three, four, five, six))
'''


def test_a_device_string_kept_in_a_holder_starts_no_runtime(tmp_path):
    assert run(tmp_path, {"configs.py": CONFIGS, "main.py": HOLDERS}) == set()


PLACERS = '''\
import torch
import torch_xla


def zeros_on(n, device="cpu"):
    return torch.zeros(n, device=device)


class Buffers:
    def __init__(self, device="cpu"):
        self.ones = torch.ones(2).to(device)


def worker(index, t):
    print(torch_xla.device(), t)


if __name__ == "__main__":
    a = zeros_on(3, device="xla")
    b = Buffers(device="xla")
    c = torch.nn.Linear(2, 2, device="xla")
    d = torch.ones(2).new_zeros(3, device="xla")
    e = dict(device="xla")
    torch_xla.launch(worker, args=(a,))
'''


def test_a_device_string_that_places_a_tensor_still_starts_the_runtime(tmp_path):
    assert run(tmp_path, {"main.py": PLACERS}) == {("main.py", n, "XLA003") for n in (19, 20, 21, 22)}


# --- 2. XLA401: environment tests that pick the XLA side -------------------------------------

ENV_GUARDS = '''\
import os
import torch
import torch_xla


def pick_a():
    if "PJRT_DEVICE" in os.environ:
        return torch_xla.device()
    return torch.device("cuda")


def pick_b():
    if os.getenv("COLAB_TPU_ADDR"):
        return torch_xla.device()
    return torch.device("cuda")


def pick_c():
    if os.environ.get("PJRT_DEVICE") is not None:
        return torch_xla.device()
    return torch.device("cuda")


def pick_d():
    if os.environ.get("XRT_TPU_CONFIG") is None:
        return torch.device("cuda")
    return torch_xla.device()


def free_cache():
    if "COLAB_TPU_ADDR" not in os.environ:
        torch.cuda.empty_cache()


def wait():
    if os.getenv("TPU_NAME"):
        return
    torch.cuda.synchronize()
'''

OPTIONAL_XLA = '''\
import torch

try:
    import torch_xla
    import torch_xla.core.xla_model as xm
except ImportError:
    torch_xla = xm = None


def get_device():
    if xm:
        return torch_xla.device()
    return torch.device("cuda")


def wait():
    if xm:
        torch.cuda.synchronize()
    torch_xla.sync()
'''


def test_an_xla_environment_test_makes_its_other_side_cuda_code(tmp_path):
    assert run(tmp_path, {"env_guards.py": ENV_GUARDS, "optional.py": OPTIONAL_XLA}) == {
        ("optional.py", 18, "XLA401")}


NOT_GUARDS = '''\
import os
import torch
import torch_xla


def pick_a():
    if os.getenv("PJRT_DEVICE", "TPU"):
        return torch_xla.device()
    return torch.device("cuda")


def pick_b():
    if os.getenv("HOME"):
        return torch_xla.device()
    return torch.device("cuda")


def pick_c():
    if "PJRT_DEVICE" in os.environ:
        torch.cuda.synchronize()
    return torch_xla.device()
'''


def test_cuda_code_on_the_xla_side_or_under_another_test_is_still_reported(tmp_path):
    assert run(tmp_path, {"not_guards.py": NOT_GUARDS}) == {
        ("not_guards.py", 9, "XLA401"), ("not_guards.py", 15, "XLA401"), ("not_guards.py", 20, "XLA401")}


# --- 3. XLA601: state that is already on the CPU ---------------------------------------------

CHECKPOINTS = '''\
import torch
import torch_xla


def to_host(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: to_host(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_host(v) for v in obj)
    return obj


def export_half(model, path):
    cpu_model = model.cpu().half()
    torch.save(cpu_model.state_dict(), path)


def export_cast(model, path):
    host_model = model.to("cpu").to(dtype=torch.float16).eval()
    torch.save(host_model.state_dict(), path)


def save_all(model, opt, path):
    torch.save(to_host({"model": model.state_dict(), "opt": opt.state_dict()}), path)


def save_model(model, path):
    state = to_host(model.state_dict())
    torch.save(state, path)


def export_on_device(model, path):
    bf16_model = model.bfloat16()
    torch.save(bf16_model.state_dict(), path)


def export_moved_back(model, path):
    cpu_model = model.cpu().to(torch_xla.device())
    torch.save(cpu_model.state_dict(), path)


def as_float(obj):
    if isinstance(obj, torch.Tensor):
        return obj.float()
    return obj


def save_as_float(model, path):
    torch.save(as_float(model.state_dict()), path)


def train():
    model = torch.nn.Linear(4, 4).to(torch_xla.device())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    export_half(model, "a.pt")
    export_cast(model, "b.pt")
    save_all(model, opt, "c.pt")
    save_model(model, "d.pt")
    export_on_device(model, "e.pt")
    export_moved_back(model, "f.pt")
    save_as_float(model, "g.pt")
'''


def test_a_cpu_copy_saved_after_a_cast_or_through_a_to_cpu_helper_is_not_device_state(tmp_path):
    assert run(tmp_path, {"ckpt.py": CHECKPOINTS}) == {
        ("ckpt.py", 36, "XLA601"), ("ckpt.py", 41, "XLA601"), ("ckpt.py", 51, "XLA601")}


EXPORT = '''\
import torch


def export_fp16(model, path):
    cpu_model = model.cpu().half()
    torch.save(cpu_model.state_dict(), path)


def export_raw(model, path):
    torch.save(model.state_dict(), path)
'''

LAUNCHED = '''\
import torch
import torch_xla
from export import export_fp16, export_raw


def _mp_fn(index):
    model = torch.nn.Linear(4, 4).to(torch_xla.device())
    export_fp16(model, "fp16.pt")
    export_raw(model, "raw.pt")


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_cpu_copy_cast_in_another_module_of_the_project(tmp_path):
    assert run(tmp_path, {"export.py": EXPORT, "train.py": LAUNCHED}) == {("export.py", 10, "XLA601")}


# --- 4. XLA701 / XLA702: enabled= holding a CUDA test ---------------------------------------

AMP_SETUP = '''\
import torch
import torch_xla


def scaler_from_local():
    use_amp = torch.cuda.is_available()
    return torch.amp.GradScaler("cuda", enabled=use_amp)


def scaler_from_default(use_amp=torch.cuda.is_available()):
    return torch.cuda.amp.GradScaler(enabled=use_amp)


def scaler_from_caller(use_amp):
    return torch.amp.GradScaler("cuda", enabled=use_amp)


class Runner:
    def __init__(self):
        self.use_cuda = torch.cuda.is_available()
        self.amp = self.use_cuda
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.amp)

    def autocast(self):
        return torch.autocast("cuda", enabled=self.amp)


def scaler_always(use_amp=True):
    return torch.amp.GradScaler("cuda", enabled=use_amp)


def scaler_overridden(use_amp=torch.cuda.is_available()):
    return torch.amp.GradScaler("cuda", enabled=use_amp)


def autocast_flag(flag):
    return torch.autocast("cuda", enabled=flag)


def setup(amp):
    device = torch_xla.device()
    scalers = [scaler_from_local(), scaler_from_default(), scaler_from_caller(torch.cuda.is_available())]
    runner = Runner()
    scalers += [scaler_always(), scaler_overridden(True)]
    return device, scalers, runner, autocast_flag(amp)
'''


def test_enabled_holding_a_cuda_test_through_a_name_attribute_or_parameter(tmp_path):
    assert run(tmp_path, {"amp_setup.py": AMP_SETUP}) == {
        ("amp_setup.py", 29, "XLA702"), ("amp_setup.py", 33, "XLA702"), ("amp_setup.py", 37, "XLA701")}


AMP_HELPERS = '''\
import torch


def make_scaler(use_amp=torch.cuda.is_available()):
    return torch.amp.GradScaler("cuda", enabled=use_amp)


def make_autocast(use_amp=torch.cuda.is_available()):
    return torch.autocast("cuda", enabled=use_amp)
'''

AMP_TRAIN = '''\
import torch
import torch_xla
from amp_helpers import make_scaler, make_autocast


def _mp_fn(index):
    device = torch_xla.device()
    model = torch.nn.Linear(4, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = make_scaler()
    for _ in range(3):
        with make_autocast(use_amp=True):
            loss = model(torch.randn(2, 4, device=device)).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch_xla.sync()


if __name__ == "__main__":
    torch_xla.launch(_mp_fn)
'''


def test_a_default_another_module_overrides_is_not_trusted(tmp_path):
    assert run(tmp_path, {"amp_helpers.py": AMP_HELPERS, "train.py": AMP_TRAIN}) == {
        ("amp_helpers.py", 9, "XLA701")}

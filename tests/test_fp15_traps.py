"""Correct code session 15's attack reported (helper branch fp15): each a trap that must stay
silent, with the shape that must still be reported beside it. Real flake8 on a small project.

- XLA003: ``device="xla"`` handed to something that only holds the string (a dataclass or
  plain config class, ``SimpleNamespace``, ``dict``, ``argparse.Namespace``,
  ``parser.set_defaults``, ``functools.partial``) starts no runtime before the launch; a
  torch factory, a tensor method or a module helper whose ``device`` parameter places a
  tensor still does.
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

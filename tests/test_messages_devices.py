"""Message wording of XLA001 and XLA402: expressions shown as written (cut when long), and
what happens when a count cannot be seen, in the target version's terms."""

from __future__ import annotations

import ast

import pytest

from flake8_xla import engine, settings as settings_mod

HEAD = "import torch\nimport torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\ndef f(i): pass\n"


def messages(source: str, code: str, version: str | None = None) -> list[str]:
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return [f.message for f in found if f.code == code]


@pytest.mark.parametrize("nprocs,shown,tail", [
    ("8", "nprocs=8", "raises ValueError"),
    ("N", "nprocs=N (= 8)", "raises ValueError"),
    ("POD // HOST", "nprocs=POD // HOST", "ValueError unless None or 1"),
    ("flags.num_cores", "nprocs=flags.num_cores", "ValueError unless None or 1"),
    ("8 if flags.big else None", "nprocs=8 if flags.big else None", "ValueError unless None or 1"),
])
def test_xla001_renders_the_count(nprocs, shown, tail):
    source = HEAD + f"N = 8\ndef g(flags, POD, HOST):\n    xmp.spawn(f, nprocs={nprocs})\n"
    (message,) = messages(source, "XLA001")
    problem = message.split(";")[0]
    assert problem == f"xmp.spawn() given {shown}: {tail}"
    assert len(message) <= 100  # the expression cut at 30


def test_xla001_before_2_6_says_ignored():
    source = HEAD + "def g(flags):\n    xmp.spawn(f, nprocs=flags.num_cores)\n    xmp.spawn(f, nprocs=8)\n"
    unseen, literal = messages(source, "XLA001", "2.4")
    assert unseen == "xmp.spawn() given nprocs=flags.num_cores: ignored unless None or 1, ValueError from 2.6; drop nprocs"
    assert literal == "xmp.spawn() given nprocs=8: ignored, ValueError from 2.6; drop nprocs"


def test_xla001_long_expression_is_cut():
    source = HEAD + "def g(cfg):\n    xmp.spawn(f, nprocs=cfg.topology.hosts[0].chips_per_host * cfg.replicas)\n"
    (message,) = messages(source, "XLA001")
    shown = message.split(": ", 1)[0][len("xmp.spawn() given nprocs="):]
    assert shown.endswith("\u2026") and len(shown) == 30


def test_xla402_shows_the_arithmetic():
    source = ("import torch_xla\nimport torch_xla.core.xla_model as xm\n"
              "def w(index, model):\n    model.to(index % 8)\n    return xm.xla_device(index + 1)\n"
              "torch_xla.launch(w, args=(None,))\n")
    assert [m.split(";")[0] for m in messages(source, "XLA402")] == [
        ".to(index % 8) in XLA code: an int is a CUDA index",
        "xm.xla_device(index + 1) picks a device by rank",
    ]

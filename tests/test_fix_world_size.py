"""The DDP tutorial's shape under ``--fix --unsafe-fixes`` (issue 19, XLA110): the launch is
ported (XLA002) and the process group fixed (XLA103), but ``torch.cuda.device_count()``, 0 on
a TPU host, still reaches the launched function's ``world_size``: the run must leave it
reported, never call the port done."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_rules import settings_from_flags

pytest.importorskip("libcst")

from flake8_xla.fix import fixer  # noqa: E402

CASES = Path(__file__).resolve().parent / "fix_cases"


def test_ddp_tutorial_port_leaves_the_cuda_world_size_reported():
    text = (CASES / "XLA110_ddp_tutorial_unsafe.py").read_text(encoding="utf-8")
    settings = settings_from_flags([])
    result = fixer.fix_source(text, settings, unsafe=True)
    assert result.source == (CASES / "XLA110_ddp_tutorial_unsafe.fixed.py").read_text(encoding="utf-8")
    assert "    torch_xla.launch(demo_basic, args=(world_size,))\n" in result.source
    left = [(f.line, f.col, f.code, f.message) for f in fixer.lint(result.source, settings)]
    assert left == [(28, 17, "XLA110", "torch.cuda.device_count() is 0 on TPU, used as world_size of "
                                       "demo_basic(); read xr.world_size() in the launched function")]
    assert (result.fixed, result.remaining) == (2, 1)


def test_cuda_world_size_in_launched_code_becomes_the_runtime_count():
    text = ("import torch\nimport torch_xla\n"
            "from torch.utils.data.distributed import DistributedSampler\n\n\n"
            "def main(index, ds):\n"
            "    return DistributedSampler(ds, num_replicas=torch.cuda.device_count(), rank=index)\n\n\n"
            "torch_xla.launch(main, args=(None,))\n")
    for version, spelled, imported in (("2.9", "xr.world_size()", "import torch_xla.runtime as xr\n"),
                                       ("2.0", "xm.xrt_world_size()", "import torch_xla.core.xla_model as xm\n")):
        settings = settings_from_flags([f"--xla-version={version}"])
        result = fixer.fix_source(text, settings, unsafe=False)
        assert f"num_replicas={spelled}, rank=index)" in result.source, result.source
        assert imported in result.source
        assert [f.code for f in fixer.lint(result.source, settings) if f.code == "XLA110"] == []


def test_a_constant_world_size_is_replaced_only_where_the_rule_resolved_it():
    text = ("import torch\nimport torch_xla\nimport torch_xla.runtime as xr\n"
            "from torch.utils.data.distributed import DistributedSampler\n\nWORLD = 8\n\n\n"
            "def main(index, ds, n):\n"
            "    a = DistributedSampler(ds, num_replicas=WORLD, rank=xr.global_ordinal())\n"
            "    b = DistributedSampler(ds, num_replicas=n, rank=0)\n"
            "    return a, b\n\n\n"
            "torch_xla.launch(main, args=(None, 2))\n")
    result = fixer.fix_source(text, settings_from_flags([]), unsafe=True)
    assert result.source == text.replace("num_replicas=WORLD,", "num_replicas=xr.world_size(),")
    assert (result.fixed, result.remaining) == (1, 0)

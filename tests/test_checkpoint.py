"""XLA6 (checkpoints and ranks): XLA602's wording and severity follow the version table's
behaviour boundary (``xm.save`` lost its rendezvous in 2.1), pylint reports the letter of
the target release, and the replica query answers the spellings the rules rely on."""

from __future__ import annotations

import ast
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_xla import api_table, engine, settings as settings_mod
from flake8_xla.model import Model
from flake8_xla.registry import all_rules

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = Path(__file__).resolve().parent / "cases"
GUARDED_SAVE = (
    "import torch_xla.core.xla_model as xm\n"
    "def save(model, path):\n"
    "    if xm.is_master_ordinal():\n"
    "        xm.save(model.state_dict(), path)\n"
)


def findings(source: str, code: str, version: str | None = None) -> list:
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return [f for f in found if f.code == code]


BOUNDARIES = [(e, v) for e in api_table.behaviour_changes() for v in api_table.VERSIONS]


@pytest.mark.parametrize("entry,version", BOUNDARIES, ids=[f"{e['name']}@{v}" for e, v in BOUNDARIES])
def test_xla602_follows_the_behaviour_boundary(entry, version):
    assert entry["code"] == "XLA602" and entry["reference"]
    call = "xser.save" if entry["name"].endswith("serialization.save") else "xm.save"
    source = GUARDED_SAVE.replace("xm.save(", f"{call}(")
    if call == "xser.save":
        source = "import torch_xla.utils.serialization as xser\n" + source
    found = findings(source, "XLA602", version)
    assert len(found) == 1
    old = api_table.vtuple(version) < api_table.vtuple(entry["since"])
    assert ("hangs" in found[0].message) == old
    assert ("redundant" in found[0].message) == (not old)
    assert all_rules()["XLA602"].severity_for(api_table.vtuple(version)) == ("E" if old else "C")


def test_xla602_master_only_false_is_a_chosen_writer_from_2_1():
    source = GUARDED_SAVE.replace("path)", "path, master_only=False)")
    assert len(findings(source, "XLA602", "2.0")) == 1
    assert findings(source, "XLA602", "2.1") == []


def test_xla602_reports_the_guarded_helper_call():
    source = (
        "import torch_xla.core.xla_model as xm\nimport torch_xla.runtime as xr\n"
        "def write(model):\n    xm.save(model.state_dict(), 'ckpt.pt', global_master=True)\n"
        "def train(model):\n    write(model)\n    if xr.global_ordinal() == 0:\n        write(model)\n"
    )
    found = findings(source, "XLA602")
    assert [(f.line, f.col) for f in found] == [(8, 8)]
    assert found[0].message.startswith("write() (xm.save) under a rank test is redundant")


def test_messages_are_short():
    """Every XLA6 message of the fixtures and the handed case: median <= 100, max <= 160."""
    lengths = []
    for path in sorted(FIXTURES.glob("XLA60*.py")) + [CASES / "torch_save_state.py"]:
        source = path.read_text(encoding="utf-8")
        version = "2.0" if "_v20" in path.name else None
        lengths += [len(f.message) for f in engine.run(ast.parse(source), settings_mod.build(None, version), source)
                    if f.code.startswith("XLA60")]
    for cls in (all_rules()[c] for c in ("XLA601", "XLA602", "XLA603", "XLA604")):
        lengths.append(len(f"{cls.message}; {cls.fix}"))
    assert statistics.median(lengths) <= 100 and max(lengths) <= 160


def test_pylint_letter_follows_the_target_release(tmp_path):
    (tmp_path / "t.py").write_text(GUARDED_SAVE)
    ids = {}
    for version in ("2.0", "2.9"):
        proc = subprocess.run(
            [sys.executable, "-m", "pylint", "--load-plugins=flake8_xla.pylint_plugin", "--disable=all",
             "--enable=xla", "--persistent=n", "--score=n", "--msg-template={msg_id} {symbol}",
             f"--xla-version={version}", "t.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
        ids[version] = [line for line in proc.stdout.splitlines() if line[:1] in "ECW"]
    assert ids == {"2.0": ["E7602 xm-save-under-rank-guard"], "2.9": ["C7602 xm-save-under-rank-guard-convention"]}


# -- the replica query ---------------------------------------------------------------------
REPLICA_TESTS = """
import os
import numpy as np
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from accelerate import Accelerator

def helper(i, flags, loader, model):
    acc = 0.0
    for x, y in loader:
        acc += model(x).eq(y).sum().item()
    mean = xm.mesh_reduce("acc", acc, np.mean)
    acc_t = model(x).sum()
    xm.all_reduce(xm.REDUCE_SUM, [acc_t])
    master = xm.is_master_ordinal()
    accelerator = Accelerator()
    checks = [
        i == 0, xr.global_ordinal() == 0, dist.get_rank() == 0, os.environ["RANK"] == "0",
        master, not master, accelerator.is_main_process, acc > 0.5, flags.x and i == 1,
        xr.world_size() > 1, flags.verbose, mean > 0.5, flags.local_rank == -1, acc is None,
        "k" in y, torch.is_tensor(y), acc_t.item() > 0, len(y) > 2,
    ]

def main(index, flags):
    helper(index, flags, None, None)

torch_xla.launch(main, args=(None,))
"""


def test_replica_kind_of_each_spelling():
    tree = ast.parse(REPLICA_TESTS)
    model = Model(tree)
    func = next(f for f in model.functions if f.name == "helper")
    checks = next(n for n in ast.walk(func.node) if type(n) is ast.Assign and n.targets[0].id == "checks").value.elts
    ctx = next(c for call, c in model.calls if c.func is func)
    kinds = [model.replica_kind(test, ctx) for test in checks]
    assert kinds == ["rank"] * 7 + ["data", "rank"] + [None] * 9


def test_master_scope_of_each_spelling():
    source = (
        "import os\nimport torch.distributed as dist\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "import torch_xla.runtime as xr\n"
        "def main(index, flags):\n"
        "    tests = [xm.is_master_ordinal(), xm.is_master_ordinal(local=False), xr.local_ordinal() == 0,\n"
        "             xr.global_ordinal() == 0, dist.get_rank() == 0, index == 0, os.environ['LOCAL_RANK'] == '0',\n"
        "             flags.a and xm.is_master_ordinal(), xr.global_ordinal() % 8 == 0, xr.process_index() == 0]\n"
        "torch_xla.launch(main, args=(None,))\n"
    )
    model = Model(ast.parse(source))
    func = next(f for f in model.functions if f.name == "main")
    tests = next(n for n in ast.walk(func.node) if type(n) is ast.List).elts
    ctx = next(c for _, c in model.calls if c.func is func)
    assert [model.master_scope(t, ctx) for t in tests] == [
        "local", "global", "local", "global", "global", "global", "local", "local", None, None]
    assert model.master_scope(tests[3], ctx, polarity=False) is None
    not_master = ast.parse("not xm.is_master_ordinal()", mode="eval").body
    assert model.master_scope(not_master, ctx, polarity=False) == "local"

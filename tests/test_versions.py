"""Every entry of the version table, checked below, at and above each of its boundaries:
whether the rule fires and what its message says (``flake8_xla/data``)."""

from __future__ import annotations

import ast

import pytest

from flake8_xla import api_table, engine
from flake8_xla.rules._common import short_name
from flake8_xla.rules.api import _params
from flake8_xla.settings import Settings

VERSIONS = api_table.VERSIONS


def run(source: str, version: str, scope: str = "auto"):
    return engine.run(ast.parse(source), Settings(scope, api_table.vtuple(version)), source)


def _neighbours(boundary: str) -> list[str]:
    i = VERSIONS.index(boundary)
    return [VERSIONS[j] for j in (i - 1, i, i + 1) if 0 <= j < len(VERSIONS)]


def _snippet(entry) -> str:
    name = entry["name"]
    if entry["kind"] == "module":
        return f"import torch_xla\nimport {name}\n"
    module, attr = name.rsplit(".", 1)
    if entry["code"] == "XLA702":  # the scaler rule reports calls in XLA code
        return f"import torch_xla\nimport {module} as m\nscaler = m.{attr}()\n"
    return f"import torch_xla\nimport {module} as m\nvalue = m.{attr}\n"


CHANGES = [(e, b) for e in api_table.changes() for b in (e["deprecated"], e["removed"]) if b is not None]


@pytest.mark.parametrize("entry,boundary", CHANGES, ids=[f"{e['name']}@{b}" for e, b in CHANGES])
def test_change_entry_around_boundary(entry, boundary):
    deprecated = api_table.vtuple(entry["deprecated"]) if entry["deprecated"] else None
    removed = api_table.vtuple(entry["removed"]) if entry["removed"] else None
    for version in _neighbours(boundary):
        target = api_table.vtuple(version)
        found = [f for f in run(_snippet(entry), version) if f.code == entry["code"]]
        if entry["code"] == "XLA702":  # a scaler is reported on every release; 2.9+ says removed
            assert len(found) == 1
            assert ("was removed in torch_xla" in found[0].message) == (target >= removed)
            continue
        if removed is not None and target >= removed:
            assert found and all(f"removed in torch_xla {entry['removed']}" in f.message for f in found), (version, found)
        elif deprecated is not None and target >= deprecated:
            assert found and all(f"deprecated since torch_xla {entry['deprecated']}" in f.message for f in found), \
                (version, found)
            if removed is not None:
                assert all(f", removed in {entry['removed']}" in f.message for f in found)
        else:
            assert found == [], (version, found)
        # a replacement is suggested only when the target release has it
        since = api_table.vtuple(entry["replacement_since"])
        for f in found:
            assert (short_name(entry["replacement"]) in f.message) == (target >= since) or entry["kind"] == "module"


ENV = [(k.replace("*", "TPU_CONFIG"), e, b) for k, e in api_table.env_vars().items()
       for b in dict.fromkeys((e["deprecated"], e["no_effect"], e.get("no_effect_until"))) if b is not None]


@pytest.mark.parametrize("key,entry,boundary", ENV, ids=[f"{k}@{b}" for k, _, b in ENV])
def test_env_entry_around_boundary(key, entry, boundary):
    source = f"import os\nimport torch_xla\nos.environ[{key!r}] = '1'\n"
    for version in _neighbours(boundary):
        target = api_table.vtuple(version)
        found = [f for f in run(source, version) if f.code == entry["code"]]
        if target < api_table.vtuple(entry["deprecated"]):
            assert found == [], (version, found)
            continue
        assert len(found) == 1, (version, found)
        until = entry.get("no_effect_until")
        no_effect = entry["no_effect"] is not None and target >= api_table.vtuple(entry["no_effect"]) and (
            until is None or target <= api_table.vtuple(until))
        wording = f"no effect since torch_xla {entry['no_effect']}" if no_effect else \
            f"deprecated since torch_xla {entry['deprecated']}"
        assert wording in found[0].message, (version, found[0].message)


SIGS = [(q, rows) for q, rows in api_table.signatures().items() if len(rows) > 1]


@pytest.mark.parametrize("qualname,rows", SIGS, ids=[q for q, _ in SIGS])
def test_signature_rows_bind_in_their_own_releases_only(qualname, rows):
    """A call passing every named parameter of one release by keyword binds in that release
    and, in a release whose signature lacks one of them, is reported by XLA809."""
    module, name = qualname.rsplit(".", 1)
    for first, last, params_text in rows:
        params = _params(params_text)
        if any(kind in ("vararg", "varkw") for _, kind, _, _ in params):
            continue
        kwargs = ", ".join(f"{p}=None" for p, kind, _, ann in params if kind in ("pos", "kwonly") and ann is None)
        source = f"import torch_xla\nimport {module} as m\nm.{name}({kwargs})\n"
        named = {p for p, kind, _, ann in params if kind in ("pos", "kwonly") and ann is None}
        for version in VERSIONS:
            other = api_table.signature(qualname, api_table.vtuple(version))
            if other is None:
                continue
            other_params = _params(other)
            other_names = {p for p, kind, _, _ in other_params if kind in ("pos", "kwonly")}
            has_varkw = any(kind == "varkw" for _, kind, _, _ in other_params)
            missing_required = {p for p, kind, default, _ in other_params
                                if kind in ("pos", "kwonly") and not default} - named
            expect = bool((named - other_names and not has_varkw) or missing_required)
            found = run(source, version)
            # a deprecated or removed name is reported by its XLA80x rule instead (one fix)
            replaced = [e["code"] for e in api_table.changes() if e["name"] == qualname
                        and any(b and api_table.vtuple(version) >= api_table.vtuple(b)
                                for b in (e["deprecated"], e["removed"]))]
            got = any(f.code in ["XLA809", *replaced] for f in found) if replaced else \
                any(f.code == "XLA809" for f in found)
            assert got == (expect or bool(replaced)), (version, source, other)


def test_table_size():
    """The sizes quoted in the docs and the closing note."""
    assert len(api_table.changes()) >= 13
    assert sum(len(m["names"]) for m in api_table.tracked_modules().values()) >= 400
    assert len(api_table.signatures()) >= 39
    assert len(api_table.module_presence()) >= 100


INTRODUCED = sorted(api_table._load("api_changes.json")["introduced"])


@pytest.mark.parametrize("qualname", INTRODUCED)
def test_introduced_entry_matches_the_release_tags(qualname):
    """An ``introduced`` boundary is the first release whose tag defines the name (the
    generated names table), and the ``before`` form exists where it is suggested."""
    entry = api_table.introduced(qualname)
    module, name = qualname.rsplit(".", 1)
    versions = api_table.name_versions(module, name)
    assert min(versions, key=api_table.vtuple) == entry["since"]
    assert all(api_table.vtuple(v) >= api_table.vtuple(entry["since"]) for v in versions)
    before = entry["before"].split("(", 1)[0]
    if before.startswith("xm."):
        assert entry["before_since"] in api_table.name_versions("torch_xla.core.xla_model", before[3:])
    else:  # torch_xla.experimental.pjrt.broadcast_master_param: the module ships in 2.0
        assert entry["before_since"] in api_table.module_presence()[before.rsplit(".", 1)[0]]


_SEED_PER_RANK = (
    "import torch, torch_xla\nimport torch_xla.core.xla_model as xm\nimport torch_xla.distributed.xla_multiprocessing as xmp\n"
    "def f(index, loader):\n"
    "    torch.manual_seed(1 + index)\n"
    "    model = torch.nn.Linear(4, 2).to(xm.xla_device())\n"
    "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    for x in loader:\n"
    "        model(x).sum().backward()\n"
    "        xm.optimizer_step(opt, barrier=True)\n"
    "xmp.spawn(f, args=(None,))\n")


def test_xla205_suggests_broadcast_master_param_from_2_1():
    since = api_table.introduced("torch_xla.core.xla_model.broadcast_master_param")["since"]
    for version in _neighbours(since):
        found = [f for f in run(_SEED_PER_RANK, version) if f.code == "XLA205"]
        assert len(found) == 1, (version, found)
        new = api_table.vtuple(version) >= api_table.vtuple(since)
        assert ("xm.broadcast_master_param(model)" in found[0].message) == new, (version, found[0].message)
        assert ("torch_xla.experimental.pjrt.broadcast_master_param(model)" in found[0].message) == (not new)


_DEVICE_RANDOM = ("import torch\nimport torch_xla.core.xla_model as xm\n"
                  "torch.manual_seed(3)\nx = torch.rand(4, device=xm.xla_device())\n")


def test_xla206_suggests_torch_xla_manual_seed_from_2_5():
    since = api_table.introduced("torch_xla.manual_seed")["since"]
    for version in _neighbours(since):
        found = [f for f in run(_DEVICE_RANDOM, version) if f.code == "XLA206"]
        assert len(found) == 1, (version, found)
        new = api_table.vtuple(version) >= api_table.vtuple(since)
        assert ("torch_xla.manual_seed(3)" in found[0].message) == new, (version, found[0].message)
        assert ("xm.set_rng_state(3)" in found[0].message) == (not new)


_SCALER = ("import torch\nimport torch_xla\nfrom torch_xla.amp import GradScaler\n"
           "def f(model, loss):\n"
           "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
           "    scaler = GradScaler()\n"
           "    scaler.scale(loss).backward()\n"
           "    scaler.step(opt)\n")


def test_xla704_only_while_torch_xla_has_its_grad_scaler():
    removed = next(e["removed"] for e in api_table.changes() if e["name"] == "torch_xla.amp.GradScaler")
    for version in _neighbours(removed):
        found = [f for f in run(_SCALER, version) if f.code == "XLA704"]
        scaler = [f for f in run(_SCALER, version) if f.code == "XLA702"]
        assert len(scaler) == 1  # XLA702 reports the scaler on every release
        if api_table.vtuple(version) >= api_table.vtuple(removed):
            assert found == [], (version, found)
        else:
            assert len(found) == 1 and found[0].line == 5 and "syncfree.SGD" in found[0].message, (version, found)

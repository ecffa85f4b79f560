"""The engine pauses the cyclic garbage collector while it runs and leaves nothing for it:
the model is freed by reference counting when the run ends (issue 12: with the collector
on, moving the model's objects between generations cost a third of the engine's time)."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import pytest

from flake8_xla import engine
from flake8_xla.model import Model
from flake8_xla.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
INPUTS = [ROOT / "examples" / "train_port.py", *sorted((ROOT / "tests" / "cases").glob("*.py"))]

SOURCE = '''
import torch
import torch_xla
import torch_xla.core.xla_model as xm

class Net(torch.nn.Module):
    def forward(self, x):
        self.cache = [v * 2 for v in x]
        return (lambda y: y + 1)(x)

def train(loader, model, optimizer):
    for step, (data, target) in enumerate(loader):
        loss = model(data).sum()
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(loss.item())
    return model

def _mp_fn(index):
    device = xm.xla_device()
    train([], Net().to(device), None)
'''


def _model_objects():
    kinds = ("Scope", "Ctx", "FunctionInfo", "ClassInfo", "LoopInfo", "Frames", "Model")
    return sum(1 for o in gc.get_objects() if type(o).__name__ in kinds and type(o).__module__.startswith("flake8_xla"))


@pytest.mark.parametrize("path", [None, *INPUTS], ids=lambda p: p.name if p else "inline")
def test_a_run_leaves_no_cycles_for_the_collector(path):
    source = path.read_text(encoding="utf-8") if path else SOURCE
    try:
        tree = ast.parse(source)
    except SyntaxError:
        pytest.skip("syntax of a newer Python")
    gc.collect()
    before = _model_objects()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        findings = engine.run(tree, Settings(), source)
        found = gc.collect()
        garbage = [o for o in gc.garbage if type(o).__module__.startswith("flake8_xla")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert findings or path is not None  # the rules ran (the inline module has findings)
    assert garbage == []
    assert found == 0  # not even ast.dump's closures: rules compare expressions by expr_key
    assert _model_objects() == before


def test_the_collector_state_is_restored():
    tree = ast.parse(SOURCE)
    assert gc.isenabled()
    engine.run(tree, Settings(), SOURCE)
    assert gc.isenabled()
    gc.disable()
    try:
        engine.run(tree, Settings(), SOURCE)
        assert not gc.isenabled()  # a host that paused it keeps it paused
    finally:
        gc.enable()


def test_a_model_without_release_holds_cycles():
    """The premise: without release() the model is cyclic garbage (so the test above can fail)."""
    tree = ast.parse(SOURCE)
    gc.collect()
    Model(tree, Settings())
    assert gc.collect() > 0

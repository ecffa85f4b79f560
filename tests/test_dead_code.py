"""Code that never runs is pruned by the model, for every rule (a review found findings in it):
the body of ``if False:`` / ``if 0:`` / ``while False:``, of ``if TYPE_CHECKING:``, of ``if DEBUG:``
where ``DEBUG`` is a module constant bound once to a literal ``False`` / ``0`` and never rebound,
the ``else`` of ``if not DEBUG:``, and an ``and`` with such an operand. Neither its findings nor
its facts count (a dead ``xm.optimizer_step`` makes no double step)."""

from __future__ import annotations

import ast

from flake8_xla import engine, settings
from flake8_xla.model import Model
from work_counter import engine_work

SOURCE = '''\
from typing import TYPE_CHECKING
import typing

import torch
import torch_xla
import torch_xla.core.xla_model as xm

DEBUG = False
VERBOSE = 0
TRACE = False
LIVE = False


def toggle():
    global TRACE
    TRACE = True


def train(model, loader, opt):
    dev = torch_xla.device()
    model.to(dev)
    for x, y in loader:
        loss = model(x.to(dev), y.to(dev))
        loss.backward()
        if False:
            print(loss.item())
        if 0:
            print(loss.item())
        if DEBUG:
            print(loss.item())
        if VERBOSE and x is not None:
            print(loss.item())
        if not DEBUG:
            pass
        else:
            print(loss.item())
        if DEBUG:
            xm.optimizer_step(opt)
        if TRACE:
            print(loss.item())
        if LIVE:
            print(loss.item())
        while False:
            print(loss.item())
        if typing.TYPE_CHECKING:
            print(loss.item())
        opt.step()
        xm.mark_step()


if TYPE_CHECKING:
    n = xm.xrt_world_size()
if DEBUG: n = xm.xrt_world_size()
n = xm.xrt_world_size()


def shadow():
    DEBUG = True
    if DEBUG:
        return xm.xrt_world_size()


LIVE = True
'''


def lint(source: str) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in engine.run(ast.parse(source), settings.build(None, None), source)}


def test_findings_and_facts_in_dead_code_are_pruned():
    assert lint(SOURCE) == {
        (40, "XLA501"),  # TRACE is rebound by toggle() (global): live
        (42, "XLA501"),  # LIVE is rebound at the end of the module: live
        (48, "XLA805"),
        (54, "XLA801"),
        (60, "XLA801"),  # a local DEBUG = True shadows the module constant
    }


def test_dead_blocks_are_the_model_s_one_notion():
    tree = ast.parse(SOURCE)
    model = Model(tree, settings.build(None, None))
    lines = sorted({start[0] for start, _end in model.dead_blocks})
    assert lines == [26, 28, 30, 32, 36, 38, 44, 46, 52, 53]
    assert model.in_dead_code(26, 12) and not model.in_dead_code(25, 8) and not model.in_dead_code(53, 0)


def test_a_rebound_constant_anywhere_keeps_the_code_live():
    """One rebinding (module level, ``global`` in a function, an import, a loop target) keeps
    every ``if FLAG:`` live; a literal ``if False:`` stays dead whatever else is rebound."""
    head = ("import torch_xla.core.xla_model as xm\nFLAG = False\n\n\ndef f():\n    if FLAG:\n"
            "        xm.xrt_world_size()\n    if False:\n        xm.xrt_world_size()\n")
    assert lint(head) == set()
    for rebind in ("FLAG = True\n", "def g():\n    global FLAG\n    FLAG = True\n", "from cfg import FLAG\n",
                   "for FLAG in (0, 1):\n    pass\n", "FLAG += 1\n", "from cfg import *\n"):
        assert lint(head + rebind) == {(7, "XLA801")}, rebind


def flags(n: int) -> str:
    """N flags, each guarding a dead call and a dead `if False:` in a loop of its own;
    every third one rebound by a function (`global`), every fifth shadowed by a local: the
    model walks at most three times, and findings are filtered by bisection."""
    out = ["import torch_xla\nimport torch_xla.core.xla_model as xm\n"]
    out += [f"F{i} = False\n" for i in range(n)]
    for i in range(n):
        local = f"    F{i} = 1\n" if i % 5 == 0 else ""
        out.append(f"def f{i}(loader, model):\n{local}    for x in loader:\n        loss = model(x)\n"
                   f"        if F{i} and not False:\n            xm.xrt_world_size()\n"
                   f"        if False:\n            xm.xrt_world_size()\n        xm.xrt_world_size()\n"
                   "        torch_xla.sync()\n")
        if i % 3 == 0:
            out.append(f"def g{i}():\n    global F{i}\n    F{i} = True\n")
    return "".join(out)


def test_doubling_the_flags_at_most_doubles_work():
    engine_work(flags(30))
    small, found_small = engine_work(flags(30))
    mid, found_mid = engine_work(flags(60))
    large, found_large = engine_work(flags(120))
    assert len(found_small) == 30 + 14  # live: each unconditional one, and F0, F3, F5, F6, F9, F10, ...
    assert len(found_large) > len(found_mid) > len(found_small)
    assert mid <= 2.2 * small and large <= 2.2 * mid, (small, mid, large)


def test_the_step_walk_skips_dead_branches():
    """The step's own walk (``Model.step_sites``, which reads the tree itself) walks only the
    branch that runs: nothing of ``if DEBUG:`` is step code, the ``else`` is."""
    source = ("import torch_xla\nimport torch_xla.core.xla_model as xm\nDEBUG = False\n\n\n"
              "def train(model, loader, opt):\n    dev = torch_xla.device()\n    model.to(dev)\n"
              "    for x in loader:\n        loss = model(x.to(dev))\n        loss.backward()\n"
              "        if DEBUG:\n            print(loss.item())\n        else:\n            print(loss.item())\n"
              "        opt.step()\n        torch_xla.sync()\n")
    model = Model(ast.parse(source), settings.build(None, None))
    lines = {getattr(node, "lineno", None) for node, _ctx, _gated, _where in model.step_sites()}
    assert 13 not in lines and 15 in lines
    assert lint(source) == {(15, "XLA501")}

"""The per-loop indexes the walk records (``LoopInfo.own``, ``LoopInfo.inner``) and what is
built from them (``LoopInfo.calls``, ``Model.loop_any``) agree with the calls of the module:
on every fixture, case and example, a loop's calls are the calls anywhere inside it in walk
order, its own calls those whose innermost loop it is, its inner loops those directly inside
it, and ``loop_any`` answers ``any`` over all its calls, nested loops included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flake8_xla.model import Model

HERE = Path(__file__).parent
FILES = sorted([*HERE.glob("fixtures/*.py"), *HERE.glob("cases/*.py"), *HERE.parent.glob("examples/*.py")])
SOURCE = """\
import torch_xla.core.xla_model as xm
def f(loader, model, opt, rows):
    for x in loader:
        g(x)
        while x:
            h(x)
            for y in rows:
                xm.optimizer_step(opt)
                k = [m(z) for z in y]
            g(x)
        def inner():
            for q in rows:
                g(q)
        lambda: g(x)
    for w in rows:
        g(w)
"""


def check(model):
    for loop in model.loops:
        # every call anywhere inside, in walk order (as the walk once listed them in each loop)
        assert loop.calls == [(c, x) for c, x in model.calls if any(lp is loop for lp in x.loops)]
        assert loop.own == [(c, x) for c, x in loop.calls if x.loops[-1] is loop]
        assert loop.inner == [lp for lp in model.loops if lp.ctx.loops and lp.ctx.loops[-1] is loop]
        for key, pred in (("t_g", lambda c, x: type(c.func) is ast.Name and c.func.id == "g"),
                          ("t_attr", lambda c, x: type(c.func) is ast.Attribute),
                          ("t_line", lambda c, x: c.lineno % 3 == 0)):
            assert model.loop_any(loop, key, pred) == any(pred(c, x) for c, x in loop.calls), (key, loop.node.lineno)


def test_nested_loops_by_hand():
    model = Model(ast.parse(SOURCE))
    check(model)
    outer, while_, rows, q, w = model.loops
    assert [type(lp.node).__name__ for lp in model.loops] == ["For", "While", "For", "For", "For"]
    assert outer.inner == [while_] and while_.inner == [rows] and rows.inner == [] and q.inner == []
    assert [c.lineno for c, _ in outer.own] == [4]  # not the calls of inner() or the lambda's
    assert sorted(c.lineno for c, _ in while_.own) == [6, 10]
    assert sorted(c.lineno for c, _ in rows.own) == [8, 9]  # the comprehension's call too
    assert model.loop_any(outer, "t_step", lambda c, x: type(c.func) is ast.Attribute)  # xm.optimizer_step, 2 levels in
    assert not model.loop_any(w, "t_step", lambda c, x: type(c.func) is ast.Attribute)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_loop_indexes_agree_with_loop_calls(path):
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        pytest.skip("needs a newer Python")
    check(Model(tree))

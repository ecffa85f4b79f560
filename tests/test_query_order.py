"""Memoised model queries must not depend on the order rules ask them in (found by a
differential review of issue 12's speed work, where rules began to ask in another order)."""

from __future__ import annotations

import ast

import pytest

from flake8_xla import engine
from flake8_xla.settings import Settings


def _caller_chain(n: int, deepest: str, next_deepest: str) -> str:
    """f0 (``deepest``) <- f1 (``next_deepest``) <- f2 <- ... <- f{n}, and f{n} is called
    only where XLA is off: f_k is n - k + 1 callers away from that branch."""
    lines = ["import os", "import torch", "USE_TPU = os.environ.get('TPU') == '1'", "if USE_TPU:",
             "    import torch_xla.core.xla_model as xm", "",
             "def f1(x):", f"    return f0({next_deepest})", "",
             "def f0(x):", f"    return {deepest}", ""]
    for k in range(2, n + 1):
        lines += [f"def f{k}(x):", f"    return f{k - 1}(x)", ""]
    lines += ["if not USE_TPU:", f"    f{n}(torch.zeros(1))", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("deepest, next_deepest", [("x.cuda()", "x.to('cuda')"), ("x.to('cuda')", "x.cuda()")])
def test_the_caller_bound_gives_one_answer_whatever_is_asked_first(deepest, next_deepest):
    """XLA-off is followed 16 callers up. With 16 functions above f1, f1 is off (silent)
    and f0, one level further, is past the bound (reported) -- whichever of the two calls
    XLA401 looks at first (it asks .cuda() calls before .to() calls)."""
    source = _caller_chain(16, deepest, next_deepest)
    found = engine.run(ast.parse(source), Settings(), source)
    assert [(f.line, f.col, f.code) for f in found] == [(11, 11, "XLA401")]


def test_within_the_bound_both_are_off():
    source = _caller_chain(15, "x.cuda()", "x.to('cuda')")
    assert engine.run(ast.parse(source), Settings(), source) == []

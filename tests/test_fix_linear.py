"""No superlinear path in the fixer: doubling a generated input at most doubles the work of
``fix_source`` in flake8_xla/fix (its lines executed, counted as tests/work_counter.py counts
the engine's: deterministic, no clocks; LibCST's and the engine's own work are not counted).

Found by the adversarial pass over issue 22, each grew per doubling (N=25 to 50 before the fix;
the test starts smaller where the work is large): ``launched_steps`` 3.5x (XLA201's fix looked for a
clip before the step in every node of the module, per step), ``loaders_passed`` 2.7x (XLA301's
fix looked for the callee's loop in every node, per loader), ``renamed_imports`` 3.1x (each
``from xm import x as a`` re-read every name of the module) and ``steps_in_one_block`` 2.8x
(XLA201 scanned the statements before each step for a clip, and indexed the block by a
list search). XLA203's scan of the statements after a clip for its step, made one pass per
block with them, stopped at the step already in these shapes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("libcst")

from flake8_xla.fix import fixer  # noqa: E402
from flake8_xla.settings import build  # noqa: E402
from work_counter import LineCounter  # noqa: E402

FIX_PACKAGE = str(Path(fixer.__file__).resolve().parent)
ALWAYS = build("always", None)
SLACK = 2.2
N = 25

HEAD = "import torch\nimport torch.multiprocessing as mp\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"


def launched_steps(n):
    return (HEAD + "".join(f"def train{i}(rank, loader, model, optimizer):\n    for x in loader:\n"
                           "        model(x.to(torch_xla.device())).sum().backward()\n        optimizer.step()\n"
                           for i in range(n))
            + "if __name__ == '__main__':\n"
            + "".join(f"    mp.spawn(train{i}, args=(None, None, None), nprocs=8, join=True)\n" for i in range(n)))


def loaders_passed(n):
    return (HEAD + "from torch.utils.data import DataLoader\n"
            + "".join(f"def fit{i}(model, opt, loader):\n    for x in loader:\n        model(x).sum().backward()\n"
                      f"        xm.optimizer_step(opt)\n\n\ndef caller{i}(model, opt, ds):\n"
                      f"    fit{i}(model, opt, DataLoader(ds, batch_size=8, drop_last=True))\n"
                      for i in range(n)))


def renamed_imports(n):
    return (HEAD + "".join(f"from torch_xla.core.xla_model import xrt_world_size as w{i}\n" for i in range(n))
            + "".join(f"n{i} = w{i}()\n" for i in range(n)))


def steps_in_one_block(n):
    return (HEAD + "def train(rank, loader, model, optimizer):\n    for x in loader:\n"
            "        model(x.to(torch_xla.device())).sum().backward()\n" + "        optimizer.step()\n" * n
            + "if __name__ == '__main__':\n    mp.spawn(train, args=(None, None, None), nprocs=8, join=True)\n")


SHAPES = {f.__name__: f for f in (launched_steps, loaders_passed, renamed_imports, steps_in_one_block)}
SIZES = {"launched_steps": 12, "loaders_passed": 16}  # the first N (default N), kept small for time


def fix_work(source: str) -> tuple[int, int]:
    """(lines of flake8_xla/fix executed, findings fixed) for one ``fix_source`` with the
    unsafe fixes."""
    with LineCounter(FIX_PACKAGE) as counter:
        result = fixer.fix_source(source, ALWAYS, unsafe=True)
    assert result.reverted is None, result.reverted
    return counter.count, result.fixed


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_doubling_the_input_at_most_doubles_the_fixers_work(name):
    gen, n = SHAPES[name], SIZES.get(name, N)
    fix_work(gen(2))  # one-time work (tables, imports) is not per-item work
    (small, f1), (mid, f2), (large, f3) = (fix_work(gen(k * n)) for k in (1, 2, 4))
    assert f3 > f2 > f1 > 0, "the fixes do not apply"
    assert mid <= SLACK * small, f"{name}: work {small} at N={n}, {mid} at N={2 * n} ({mid / small:.2f}x)"
    assert large <= SLACK * mid, f"{name}: work {mid} at N={2 * n}, {large} at N={4 * n} ({large / mid:.2f}x)"
    assert large - mid <= SLACK * (mid - small), (
        f"{name}: the second doubling adds {large - mid} lines, the first {mid - small} "
        f"({(large - mid) / (mid - small):.2f}x)")


def test_the_collector_is_paused_while_fixing_and_back_after(monkeypatch):
    """Full collections walked the LibCST trees again and again (the time grew 2.4x to 2.8x
    per doubling of ``launched_steps`` from 200 to 1,600 while the counted work doubled)."""
    import gc

    seen = []
    real = fixer._fix_source
    monkeypatch.setattr(fixer, "_fix_source", lambda *a: seen.append(gc.isenabled()) or real(*a))
    assert gc.isenabled()
    result = fixer.fix_source(launched_steps(2), ALWAYS, unsafe=True)
    assert (seen, gc.isenabled(), result.fixed) == ([False], True, 4)  # XLA002 and XLA201, twice

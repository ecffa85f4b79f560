"""No superlinear path: doubling a generated input at most doubles the engine's work.

Work is counted, not timed: the lines of flake8_xla code executed (tests/work_counter.py),
so the test is deterministic on any machine. Before the frame chains were memoised, the
early-return and elif-chain shapes grew 2.8x and 3.3x per doubling, and the
one-finding-per-fix pass 2.4x; chains of torch_xla-importing branches and stacked
TYPE_CHECKING checks were quadratic in the guard settling before it was memoised.
"""

from __future__ import annotations

import pytest

from generated import GENERATORS
from work_counter import engine_work

N = 150
SLACK = 2.2  # at most doubling, with room for constant terms


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_doubling_input_at_most_doubles_work(name):
    gen = GENERATORS[name]
    small, found_small = engine_work(gen(N))
    large, found_large = engine_work(gen(2 * N))
    # call_chain and exit_imports are all XLA-off by construction; the others must report
    assert len(found_large) >= len(found_small) > 0 or name in ("call_chain", "exit_imports"), "no findings"
    assert large <= SLACK * small, f"{name}: work {small} at N={N}, {large} at N={2 * N} ({large / small:.2f}x)"

"""Fuzzing with hypothesmith: any program the grammar or the AST generator produces lints
without an exception and with well-formed findings.

200 examples per test by default; ``FLAKE8_XLA_FUZZ_EXAMPLES=10000`` for a long run.
"""

from __future__ import annotations

import ast
import os
import warnings

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flake8_xla import engine
from flake8_xla.settings import Settings

# the generators compile odd programs themselves ("'int' object is not callable")
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")
EXAMPLES = int(os.environ.get("FLAKE8_XLA_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=list(HealthCheck))
# Prefixes make the generated code XLA code, so every rule runs on it.
PREFIXES = ["", "import torch_xla\nimport torch_xla.core.xla_model as xm\n",
            "import torch_xla\nimport torch.multiprocessing as mp\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"]


def check(source: str, scope: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # not a program ast.parse accepts: flake8 reports E999 itself
    found = engine.run(tree, Settings(scope=scope), source)
    assert not [f for f in found if f.code == "XLA000"], found
    lines = source.count("\n") + 1
    for f in found:
        assert 1 <= f.line <= lines + 1 and f.col >= 0
        assert f.code.startswith("XLA") and len(f.code) == 6 and "; " in f.message


@FUZZ
@given(source=hypothesmith.from_grammar(), prefix=st.sampled_from(PREFIXES), scope=st.sampled_from(["auto", "always"]))
def test_from_grammar(source, prefix, scope):
    check(prefix + source, scope)


@pytest.mark.slow  # minutes on two cores: hypothesmith's node strategy builds big modules
@FUZZ
@given(source=hypothesmith.from_node(), prefix=st.sampled_from(PREFIXES), scope=st.sampled_from(["auto", "always"]))
def test_from_node(source, prefix, scope):
    check(prefix + source, scope)

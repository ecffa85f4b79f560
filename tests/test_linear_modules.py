"""No superlinear path in the module-placement rules (XLA404, XLA405) and in the questions
their fixes ask (the device variable in scope, the function around a line): doubling a
generated input at most doubles the engine's work (lines executed, tests/work_counter.py),
as in tests/test_linear.py."""

from __future__ import annotations

import ast

import pytest

from work_counter import engine_work

N = 120
SLACK = 2.2

HEAD = ("import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "import torch_xla.distributed.parallel_loader as pl\n\n\n")


def host_models(n: int) -> str:
    """One function: N models built on the host, N optimizers over them, all stepped in one
    loop over a device loader (XLA404 per model); N device variables."""
    build = "".join(f"    d{i} = torch_xla.device()\n    m{i} = torch.nn.Linear(4, 4)\n"
                    f"    o{i} = torch.optim.SGD(m{i}.parameters(), lr=0.1)\n" for i in range(n))
    step = "".join(f"        m{i}(x).sum().backward()\n        xm.optimizer_step(o{i})\n" for i in range(n))
    return (HEAD + "def train(loader):\n" + build +
            "    for x in pl.MpDeviceLoader(loader, d0):\n" + step)


def optimizers_before_moves(n: int) -> str:
    """One function: N models, N optimizers over them, then N dtype casts of the first and
    N moves to the device (XLA405 per optimizer)."""
    build = "".join(f"    m{i} = torch.nn.Linear(4, 4)\n    o{i} = torch.optim.SGD(m{i}.parameters(), lr=0.1)\n"
                    for i in range(n))
    casts = "".join("    m0.to(torch.bfloat16)\n" for _ in range(n))
    moves = "".join(f"    m{i}.to(torch_xla.device())\n" for i in range(n))
    return HEAD + "def setup():\n" + build + casts + moves


GENERATORS = {f.__name__: f for f in (host_models, optimizers_before_moves)}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_doubling_input_at_most_doubles_work(name):
    gen = GENERATORS[name]
    small, found_small = engine_work(gen(N))
    large, found_large = engine_work(gen(2 * N))
    assert len(found_large) >= len(found_small) > 0, "no findings"
    assert large <= SLACK * small, f"{name}: work {small} at N={N}, {large} at N={2 * N} ({large / small:.2f}x)"


def test_device_names_and_owners_are_linear():
    """The fixes' questions: the device variable and the function at each line of a module
    with N functions (one sweep, one index per scope)."""
    from flake8_xla.model import Model

    def work(n):
        src = "".join(f"def f{i}():\n    dev = torch_xla.device()\n    model = 1\n\n\n" for i in range(n))
        model = Model(ast.parse("import torch_xla\n" + src))
        for i in range(n):
            line = 2 + 5 * i + 2
            assert model.device_name_at(model.ctx_at_line(line), line) == "dev"
        return len(model._cache)

    assert work(2 * N) <= SLACK * work(N)

"""No superlinear path in the optimizer-step and seeding rules (XLA108, XLA202-XLA206,
XLA704): doubling a generated input at most doubles the engine's work (lines executed,
tests/work_counter.py), as in tests/test_linear.py."""

from __future__ import annotations

import pytest

from work_counter import engine_work

N = 120
SLACK = 2.2

HEAD = ("import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "import torch_xla.distributed.parallel_loader as pl\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n\n")


def clips_in_one_loop(n: int) -> str:
    """One launched step loop over a device loader: N clips, each before an xm.optimizer_step
    with barrier=True (XLA203 and XLA204 per pair), and N reductions of another optimizer."""
    body = "".join(f"        torch.nn.utils.clip_grad_norm_(model.parameters(), {i + 1}.0)\n"
                   f"        xm.optimizer_step(opt, barrier=True)\n" for i in range(n))
    return (HEAD + "def train(index, loader, model, opt):\n"
            "    for x in pl.MpDeviceLoader(loader, torch_xla.device()):\n"
            "        model(x).sum().backward()\n" + body + "\n\ntorch_xla.launch(train, args=(None, None, None))\n")


def seeds_and_builds(n: int) -> str:
    """One launched function: N per-rank seeds each followed by a model build (XLA205), and
    N device random draws after them (XLA206 per seed)."""
    body = "".join(f"    torch.manual_seed({i} + index)\n    m{i} = torch.nn.Linear(4, 4).to(torch_xla.device())\n"
                   f"    r{i} = torch.rand(4, device=torch_xla.device())\n" for i in range(n))
    return (HEAD + "def train(index, loader):\n" + body +
            "    opt = torch.optim.SGD(m0.parameters(), lr=0.1)\n"
            "    for x in pl.MpDeviceLoader(loader, torch_xla.device()):\n"
            "        m0(x).sum().backward()\n        xm.optimizer_step(opt)\n"
            "\n\ntorch_xla.launch(train, args=(None,))\n")


def wrapped_steps(n: int) -> str:
    """N DDP-wrapped models, each stepped with xm.optimizer_step (XLA108 per step)."""
    body = "".join(f"    d{i} = DDP(torch.nn.Linear(4, 4), gradient_as_bucket_view=True)\n"
                   f"    o{i} = torch.optim.SGD(d{i}.parameters(), lr=0.1)\n"
                   f"    xm.optimizer_step(o{i})\n" for i in range(n))
    return HEAD + "def train(index):\n" + body


@pytest.mark.parametrize("gen", [clips_in_one_loop, seeds_and_builds, wrapped_steps], ids=lambda g: g.__name__)
def test_doubling_input_at_most_doubles_work(gen):
    small, found_small = engine_work(gen(N))
    large, found_large = engine_work(gen(2 * N))
    assert len(found_large) > len(found_small) > 0
    assert large <= SLACK * small, f"{gen.__name__}: work {small} at N={N}, {large} at N={2 * N} ({large / small:.2f}x)"

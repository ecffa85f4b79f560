"""No superlinear path in XLA005, XLA110 and XLA306 (issue 19): doubling a generated input
at most doubles the engine's work (lines of flake8_xla code executed, as in test_linear.py)."""

from __future__ import annotations

import pytest

from work_counter import engine_work

SLACK = 2.2

HEAD = ("import numpy as np\nimport torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
        "import torch_xla.distributed.parallel_loader as pl\n"
        "from torch.utils.data.distributed import DistributedSampler\n\n\n")


def parent_collectives(n: int) -> str:
    """N launches from main(), each followed by a collective and a helper running one (XLA005)."""
    helpers = "".join(f"def report{i}(acc):\n    return xm.mesh_reduce('a{i}', acc, np.mean)\n\n\n" for i in range(n))
    main = "def main():\n" + "".join(
        f"    torch_xla.launch(w)\n    xm.rendezvous('r{i}')\n    report{i}(1.0)\n" for i in range(n))
    return (HEAD + "def w(index):\n    xm.rendezvous('in')\n\n\n" + helpers + main
            + "\n\nif __name__ == '__main__':\n    main()\n    xm.rendezvous('end')\n")


def reused_loaders(n: int) -> str:
    """One name bound to a ParallelLoader N times, N epoch loops over it (XLA306), N nested loops."""
    body = "".join(f"    para = pl.ParallelLoader(loader, [dev])\n    for e{i} in range(epochs):\n"
                   f"        for x in para.per_device_loader(dev):\n            model(x)\n" for i in range(n))
    nested = "".join("    " * (i + 1) + f"for k{i} in range(epochs):\n" for i in range(min(n, 40)))
    nested += "    " * (min(n, 40) + 1) + "for x in batches:\n" + "    " * (min(n, 40) + 2) + "model(x)\n"
    return (HEAD + "def train(loader, model, epochs):\n    dev = torch_xla.device()\n" + body
            + "    batches = pl.ParallelLoader(loader, [dev]).per_device_loader(dev)\n" + nested)


def cuda_world_sizes(n: int) -> str:
    """A CUDA count passed down a chain of N helpers, each scaling a learning rate and building
    a sampler with it, called from N places (XLA110)."""
    helpers = "".join(f"def h{i}(ds, world_size):\n    opt(lr=0.1 * world_size)\n"
                      f"    h{i + 1}(ds, world_size)\n    return DistributedSampler(ds, num_replicas=world_size)\n\n\n"
                      for i in range(n))
    helpers += f"def h{n}(ds, world_size):\n    return world_size\n\n\n"
    calls = "".join(f"    h{i}(ds, n{i})\n" for i in range(n))
    counts = "".join(f"    n{i} = torch.cuda.device_count()\n" for i in range(n))
    return HEAD + "def opt(lr):\n    return lr\n\n\n" + helpers + "def main(ds):\n" + counts + calls + "\n\nmain(None)\n"


@pytest.mark.parametrize("gen", [parent_collectives, reused_loaders, cuda_world_sizes], ids=lambda g: g.__name__)
def test_doubling_input_at_most_doubles_work(gen):
    n = 40
    engine_work(gen(n))
    small, found_small = engine_work(gen(n))
    mid, found_mid = engine_work(gen(2 * n))
    large, found_large = engine_work(gen(4 * n))
    assert len(found_large) > len(found_mid) > len(found_small) > 0
    assert mid <= SLACK * small, f"work {small} at N={n}, {mid} at N={2 * n} ({mid / small:.2f}x)"
    assert large <= SLACK * mid, f"work {mid} at N={2 * n}, {large} at N={4 * n} ({large / mid:.2f}x)"
    assert large - mid <= SLACK * (mid - small), f"the second doubling adds {large - mid}, the first {mid - small}"

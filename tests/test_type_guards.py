"""Type and device guards around a read (``Model.guarded_not_device``): no superlinear path.
Behaviour: ``tests/fixtures/XLA501_type_guards.py``."""

from __future__ import annotations

from work_counter import engine_work


def guards(n: int) -> str:
    """N helpers, each reading its parameter under a guard that excludes tensors and once
    outside it; a helper with N nested guards and N reads in the innermost; a test that
    `and`s N isinstance checks with N reads under it; the step calls each helper."""
    out = ["import torch\nimport torch_xla\n\n\n"]
    for i in range(n):
        out.append(f"def h{i}(v):\n    if not isinstance(v, torch.Tensor):\n        print(v)\n"
                   f"    if isinstance(v, (int, float)):\n        return float(v)\n    return v.item()\n\n\n")
    nest = "def deep(v):\n" + "".join("    " * (i + 1) + f"if isinstance(v, float) or v{i}:\n" for i in range(min(n, 60)))
    nest += "".join("    " * (min(n, 60) + 1) + f"print(v, {i})\n" for i in range(n))
    wide = "def wide(" + ", ".join(f"a{i}" for i in range(n)) + "):\n    if " + " and ".join(
        f"isinstance(a{i}, float)" for i in range(n)) + ":\n" + "".join(f"        print(a{i})\n" for i in range(n))
    step = ("def train(model, loader, opt):\n    dev = torch_xla.device()\n    model.to(dev)\n"
            "    for x in loader:\n        loss = model(x.to(dev))\n        loss.backward()\n"
            + "".join(f"        h{i}(loss)\n" for i in range(n)) + "        deep(loss)\n"
            + "        wide(" + ", ".join("loss" for _ in range(n)) + ")\n        opt.step()\n        torch_xla.sync()\n")
    return "".join(out) + nest + "\n\n" + wide + "\n\n" + step


def test_doubling_the_guards_at_most_doubles_work():
    engine_work(guards(30))
    small, found_small = engine_work(guards(30))
    mid, found_mid = engine_work(guards(60))
    large, found_large = engine_work(guards(120))
    assert sorted({f.code for f in found_small}) == ["XLA501"]
    # each helper's v.item(); deep's prints (`or`: v may be a tensor); wide's reads of a16..a29
    # (an `and` is looked at up to its 16th operand)
    assert len(found_small) == 30 + 30 + 14
    assert len(found_large) > len(found_mid) > len(found_small)
    assert mid <= 2.2 * small and large <= 2.2 * mid, (small, mid, large)
